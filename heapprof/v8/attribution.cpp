#include "heapprof/v8/attribution.h"

#include <algorithm>

#include "heapprof/v8/v8_host.h"

namespace heapprof {

std::vector<std::string> NoInliningFlags() {
  // TurboFan (every V8 we support); Maglev and Turbolev (newer V8). TurboFan
  // also inlines array builtins (push, map...) into their callers, which
  // moves the builtins' allocations onto the caller's frame. Unknown flags
  // are reported, not fatal: V8 tells which it recognised.
  return {"--no-turbo-inlining", "--no-maglev-inlining", "--no-turbo-inline-array-builtins"};
}

int InliningAllowedAfterInit() {
  std::vector<std::string> applied = V8AppliedFlags();
  bool turbofan_off = std::find(applied.begin(), applied.end(), "--no-turbo-inlining") != applied.end();
  return turbofan_off ? 0 : 1;
}

}  // namespace heapprof
