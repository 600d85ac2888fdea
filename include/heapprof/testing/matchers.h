// Catch2 (2.x) matchers for allocation assertions on a Profile:
//
//   CHECK_THAT(profile, RetainsLessThan(64 * 1024).From("^cacheResult$"));
//   CHECK_THAT(profile, AllocatesLessThan(8 << 20));
//
// A failing assertion explains itself: the message gives the measured bytes,
// the heaviest stacks responsible, and the path of the profile it wrote
// (into $HEAPPROF_TEST_OUTPUT, or the current directory).
#pragma once

#include <catch2/catch.hpp>

#include <cstdint>
#include <string>

#include "heapprof/core/profile.h"
#include "heapprof/core/query.h"

namespace heapprof::testing {

// Bytes of one sample type, optionally only from stacks through matching frames.
class AllocationMatcher : public Catch::MatcherBase<Profile> {
 public:
  // What is measured: bytes allocated in the window, or still alive at its end.
  enum class Measure { kAllocated, kRetained };
  AllocationMatcher(Measure measure, int64_t limit_bytes);

  // Only count stacks passing through functions whose name matches `function_regex`.
  AllocationMatcher From(std::string function_regex) const;
  // Only count stacks passing through functions of scripts matching `script_regex`.
  AllocationMatcher InScript(std::string script_regex) const;
  // Full control: regex or glob, function and script patterns.
  AllocationMatcher Where(FrameFilter filter) const;
  // How many stacks the failure message lists (default 5).
  AllocationMatcher ShowingStacks(size_t n) const;

  // True when the measured bytes are below the limit; on failure writes the profile.
  bool match(const Profile& profile) const override;
  // The expectation, and after a failed match the evidence.
  std::string describe() const override;

  // Results of the last match(), for callers checking a matcher by hand.
  int64_t measured_bytes() const { return measured_; }
  const std::string& saved_profile_path() const { return saved_path_; }

 private:
  Measure measure_;
  int64_t limit_;
  FrameFilter filter_;
  size_t stacks_ = 5;
  mutable int64_t measured_ = 0;
  mutable std::string evidence_;    // filled by a failed match()
  mutable std::string saved_path_;  // where that profile went
};

// Passes when the window's allocations (alloc_space) total less than `bytes`.
AllocationMatcher AllocatesLessThan(int64_t bytes);
// Passes when the bytes still alive at window end (inuse_space) are less than `bytes`.
AllocationMatcher RetainsLessThan(int64_t bytes);

// Where failing matchers write profiles: $HEAPPROF_TEST_OUTPUT, or ".".
std::string TestOutputDirectory();

}  // namespace heapprof::testing

namespace Catch {
// Prints a profile in assertions as a one-line summary instead of "{?}".
template <>
struct StringMaker<heapprof::Profile> {
  static std::string convert(const heapprof::Profile& profile);
};
}  // namespace Catch
