// Questions a test or an embedder asks of a Profile: totals, totals for the
// frames matching a pattern, the heaviest stacks, and what a function retains.
// V8-free; works on any Profile (built from a window or read from pprof).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "heapprof/core/profile.h"
#include "heapprof/core/status.h"

namespace heapprof {

// How FrameFilter patterns are read.
enum class PatternSyntax {
  kRegex,  // ECMAScript regex, searched anywhere in the name (like pprof -focus)
  kGlob,   // shell glob (* ? [..]) matched against the whole name
};

// Selects frames by function name and script name; an empty pattern matches anything.
struct FrameFilter {
  std::string function;  // pattern for the function's display name
  std::string script;    // pattern for the function's script name (filename)
  PatternSyntax syntax = PatternSyntax::kRegex;
};

// A compiled FrameFilter. Cheap to copy; bad patterns fail in Compile.
class FrameMatcher {
 public:
  // Compiles the filter's patterns; kInvalidArgument for a malformed regex.
  static Result<FrameMatcher> Compile(const FrameFilter& filter);
  // Whether the function (of `profile`) matches both patterns.
  bool Matches(const Profile& profile, const Function& function) const;
  // Whether the innermost function of a location matches.
  bool Matches(const Profile& profile, LocationId location) const;
  // The filter as text, e.g. "function /leak/ in script /worker\.js/".
  std::string Describe() const;

  struct Impl;

 private:
  explicit FrameMatcher(std::shared_ptr<const Impl> impl);
  std::shared_ptr<const Impl> impl_;
};

// Sum of the sample type named `sample_type` ("inuse_space", ...) over all samples.
Result<int64_t> TotalOf(const Profile& profile, std::string_view sample_type);

// Totals for the frames a matcher selects, each sample counted once.
struct MatchTotals {
  int64_t flat = 0;    // samples whose leaf frame matches
  int64_t cum = 0;     // samples with a matching frame anywhere in the stack
  size_t samples = 0;  // number of samples counted in cum
};
MatchTotals TotalForFrames(const Profile& profile, const FrameMatcher& matcher, int sample_index);
// The same with an uncompiled filter; fails on a malformed pattern.
Result<MatchTotals> TotalForFrames(const Profile& profile, const FrameFilter& filter, int sample_index);

// One stack and the value of all samples on it (sizes merged).
struct StackTotal {
  std::vector<LocationId> locations;  // leaf first
  int64_t value = 0;
};
// The `n` stacks with the largest value for a sample type, heaviest first,
// optionally only those passing through a matching frame. Zero values are skipped.
std::vector<StackTotal> TopStacks(const Profile& profile, int sample_index, size_t n,
                                  const FrameMatcher* through = nullptr);
// One line per stack: "  1.2 MiB  leaf (file:line) <- caller (file:line) <- ...",
// at most `max_frames` frames each.
std::string FormatStacks(const Profile& profile, const std::vector<StackTotal>& stacks, std::string_view unit,
                         size_t max_frames = 8);

// In-use bytes (inuse_space) of samples whose stack passes through a matching
// frame: what those functions allocated and still keep alive at window end.
Result<int64_t> RetainedBy(const Profile& profile, const FrameFilter& filter);

}  // namespace heapprof
