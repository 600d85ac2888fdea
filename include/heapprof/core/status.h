// Errors as values: every fallible heapprof operation returns Status or Result<T>.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace heapprof {

// What went wrong, coarse enough for a caller to branch on.
enum class ErrorCode {
  kOk = 0,
  kInvalidArgument,     // bad option or input value
  kFailedPrecondition,  // wrong state: already started, not started, isolate gone
  kUnavailable,         // a resource is held by someone else (e.g. the sampler)
  kDataLoss,            // corrupt or truncated input
  kNotFound,            // missing file or target
  kIo,                  // read/write failure
  kScriptError,         // JavaScript threw or failed to compile
  kResourceExhausted,   // heap limit or cap reached
  kDeadlineExceeded,    // a time limit was reached (the call was stopped)
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

namespace internal {
// Misuse of a Result (value() of an error) ends the process in every build,
// with the error it held: continuing would read a value that is not there.
[[noreturn]] inline void DieOfBadResultAccess(const Status& status) {
  std::fprintf(stderr, "heapprof: value() of a Result that holds an error: %s\n", status.message().c_str());
  std::abort();
}
}  // namespace internal

// Either a value or a non-ok Status. Built from an OK status (a bug: there is
// no value) it holds a kInternal error saying so instead.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}         // NOLINT: implicit by design
  Result(Status status) : status_(std::move(status)) {  // NOLINT: implicit by design
    if (status_.ok()) status_ = Status(ErrorCode::kInternal, "a Result was built from an OK status without a value");
  }

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }
  T& value() & {
    Check();
    return *value_;
  }
  const T& value() const& {
    Check();
    return *value_;
  }
  T&& value() && {
    Check();
    return std::move(*value_);
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

 private:
  void Check() const {
    if (!value_.has_value()) internal::DieOfBadResultAccess(status_);
  }
  Status status_;
  std::optional<T> value_;
};

inline Status Error(ErrorCode code, std::string message) { return {code, std::move(message)}; }

namespace internal {
inline const Status& StatusOf(const Status& status) { return status; }
template <typename T>
const Status& StatusOf(const Result<T>& result) {
  return result.status();
}
}  // namespace internal

}  // namespace heapprof

#define HEAPPROF_STATUS_CONCAT_INNER(a, b) a##b
#define HEAPPROF_STATUS_CONCAT(a, b) HEAPPROF_STATUS_CONCAT_INNER(a, b)

// Returns the error of `expr` (a Status or a Result) from the enclosing
// function, which returns Status or Result<U>.
#define HEAPPROF_RETURN_IF_ERROR(expr)                                         \
  do {                                                                         \
    if (const auto& heapprof_status_or_ = (expr); !heapprof_status_or_.ok()) { \
      return ::heapprof::internal::StatusOf(heapprof_status_or_);              \
    }                                                                          \
  } while (false)

// `lhs = value of expr` (a Result), or returns its error from the enclosing
// function. `lhs` may declare a variable: HEAPPROF_ASSIGN_OR_RETURN(auto x, Parse(s)).
#define HEAPPROF_ASSIGN_OR_RETURN(lhs, expr) \
  HEAPPROF_ASSIGN_OR_RETURN_IMPL(HEAPPROF_STATUS_CONCAT(heapprof_result_, __LINE__), lhs, expr)
#define HEAPPROF_ASSIGN_OR_RETURN_IMPL(result, lhs, expr) \
  auto result = (expr);                                   \
  if (!result.ok()) return result.status();               \
  lhs = std::move(result).value()
