// Compiled against Node 26's V8 headers (14.x, which have Sample::is_live):
// the build must pick the native-liveness strategy there.
#include "heapprof/v8/strategy.h"

static_assert(heapprof::internal::kNativeLiveness,
              "V8 headers with AllocationProfile::Sample::is_live must select native liveness");
