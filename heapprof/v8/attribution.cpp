#include "heapprof/attribution.h"

#include <algorithm>

#include "heapprof/v8_host.h"

namespace heapprof {

std::vector<std::string> NoInliningFlags() {
  // TurboFan (every V8 we support); Maglev and Turbolev (newer V8). Unknown
  // ones are reported, not fatal: V8 tells which it recognised.
  return {"--no-turbo-inlining", "--no-maglev-inlining"};
}

int InliningAllowedAfterInit() {
  std::vector<std::string> applied = V8AppliedFlags();
  bool turbofan_off = std::find(applied.begin(), applied.end(), "--no-turbo-inlining") != applied.end();
  return turbofan_off ? 0 : 1;
}

}  // namespace heapprof
