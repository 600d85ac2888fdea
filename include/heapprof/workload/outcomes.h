// What the requests of a run came to: a status histogram, the failures by
// kind, console errors, and the first distinct errors with their stacks
// mapped to original sources. V8-free: the runtime reports, this counts.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "heapprof/core/source_map_locator.h"

namespace heapprof {

// Why a request failed.
enum class RequestFailure {
  kThrown,    // the handler threw (or answered something that is not a Response)
  kRejected,  // its promise, or a ctx.waitUntil() promise, was rejected
  kTimedOut,  // it ran past the per-request time limit and was terminated
};

// One distinct error: the first time it happened, and how often.
struct DistinctError {
  std::string message;  // the error's first line ("TypeError: x is undefined")
  std::string stack;    // the rest of the stack ("    at f (src/app.ts:3:9)"), mapped when possible
  RequestFailure kind = RequestFailure::kThrown;
  uint64_t count = 0;
  uint64_t first_request = 0;  // 1-based index among the run's requests
};

class RequestOutcomes {
 public:
  // Distinct errors kept with their stacks; later distinct ones are only counted.
  static constexpr size_t kMaxDistinct = 5;

  void AddResponse(int status);
  // `description` is the error as the runtime gave it: "Error: message\n    at ...".
  void AddFailure(RequestFailure kind, std::string_view description);
  void AddConsoleError() { ++console_errors_; }
  // Adds another replica's counts (errors beyond kMaxDistinct are counted only).
  void Merge(const RequestOutcomes& other);

  uint64_t requests() const { return responses_ + thrown_ + rejected_ + timed_out_; }
  uint64_t responses() const { return responses_; }
  uint64_t server_errors() const;  // responses with status 500-599
  uint64_t thrown() const { return thrown_; }
  uint64_t rejected() const { return rejected_; }
  uint64_t timed_out() const { return timed_out_; }
  // Requests that failed: thrown, rejected, timed out, or answered 5xx.
  uint64_t failed() const { return thrown_ + rejected_ + timed_out_ + server_errors(); }
  uint64_t console_errors() const { return console_errors_; }
  uint64_t distinct_errors() const { return distinct_total_; }
  const std::map<int, uint64_t>& statuses() const { return statuses_; }
  const std::vector<DistinctError>& errors() const { return errors_; }

 private:
  std::map<int, uint64_t> statuses_;
  uint64_t responses_ = 0, thrown_ = 0, rejected_ = 0, timed_out_ = 0, console_errors_ = 0;
  uint64_t distinct_total_ = 0;
  std::vector<DistinctError> errors_;
  std::unordered_set<std::string> seen_;  // messages of the distinct errors (the first 1000)
};

// Rewrites the "at name (file:line:col)" / "at file:line:col" lines of a V8
// stack to the original positions the scripts' source maps give; lines
// without a map stay as they are.
std::string SymbolizeStack(std::string_view stack, SourceMapProvider& maps);

// The outcome report: one line of statuses and failures, then the first
// distinct errors with their stacks (mapped through `maps` when given).
std::string FormatOutcomes(const RequestOutcomes& outcomes, SourceMapProvider* maps);

// Whether the failed share is above `max_share` (0..1), and the sentence that
// says which share failed and why ("61 % of 200 requests failed (120 threw,
// 2 answered 5xx), above --max-failures 50 %").
struct FailureVerdict {
  bool too_many = false;
  std::string message;
};
FailureVerdict JudgeFailures(const RequestOutcomes& outcomes, double max_share);

}  // namespace heapprof
