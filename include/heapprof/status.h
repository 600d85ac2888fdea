// Errors as values: every fallible heapprof operation returns Status or Result<T>.
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace heapprof {

// What went wrong, coarse enough for a caller to branch on.
enum class ErrorCode {
  kOk = 0,
  kInvalidArgument,   // bad option or input value
  kFailedPrecondition,  // wrong state: already started, not started, isolate gone
  kUnavailable,       // a resource is held by someone else (e.g. the sampler)
  kDataLoss,          // corrupt or truncated input
  kNotFound,          // missing file or target
  kIo,                // read/write failure
  kScriptError,       // JavaScript threw or failed to compile
  kResourceExhausted, // heap limit or cap reached
  kDeadlineExceeded,  // a time limit was reached (the call was stopped)
  kInternal,
};

// A code plus a human-readable message; ok() when code == kOk.
class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(ErrorCode code, std::string message) : code_(code), message_(std::move(message)) {}
  static Status Ok() { return {}; }

  bool ok() const { return code_ == ErrorCode::kOk; }
  ErrorCode code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  ErrorCode code_ = ErrorCode::kOk;
  std::string message_;
};

// Either a value or a non-ok Status.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) { assert(!status_.ok()); }  // NOLINT

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }
  T& value() & { assert(ok()); return *value_; }
  const T& value() const& { assert(ok()); return *value_; }
  T&& value() && { assert(ok()); return std::move(*value_); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }

 private:
  Status status_;
  std::optional<T> value_;
};

inline Status Error(ErrorCode code, std::string message) { return {code, std::move(message)}; }

}  // namespace heapprof
