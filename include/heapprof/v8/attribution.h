// Exact attribution: stop V8's optimizing tiers from inlining, so that an
// allocation stays charged to the function that made it. (V8's sampler sees
// only physical frames: an inlined helper vanishes from the stack and its
// allocations go to its caller.)
#pragma once

#include <string>
#include <vector>

namespace heapprof {

// Candidate V8 flags that turn inlining off in each optimizing tier that some
// V8 version has. Pass them to InitializeV8 before any isolate exists;
// V8AppliedFlags() then tells which ones the linked V8 knew.
std::vector<std::string> NoInliningFlags();

// After InitializeV8: 0 when inlining is off in the optimizing tiers this V8
// has (TurboFan's flag was applied), 1 when it may inline, for the profile's
// "inlining" comment.
int InliningAllowedAfterInit();

}  // namespace heapprof
