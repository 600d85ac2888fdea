// Where an embedded isolate runs out of memory. V8 splits a heap limit into a
// young generation (room for new objects) and an old one; the isolate is out
// of memory when the old generation is full, which comes before heap used
// reaches the whole limit. A projection "when does it hit the limit" aims at
// this number, not at the configured one.
#pragma once

#include <cstddef>

namespace v8 {
class Isolate;
}  // namespace v8

namespace heapprof {

// The old generation's limit of an isolate created with this heap limit
// (heapprof::Isolate, IsolateOptions::heap_limit_bytes): what V8's own
// split of the limit gives it.
size_t OldGenerationLimitBytes(size_t heap_limit_bytes);

// The old generation now (every space but the young generation's): the
// bytes its objects use and the bytes of its pages. V8 runs out of memory
// when the pages reach the limit, so that is the series to project; the
// gap between the two is fragmentation. Call on the isolate's thread.
struct OldGenerationUse {
  size_t used_bytes = 0;
  size_t committed_bytes = 0;
};
OldGenerationUse OldGenerationNow(v8::Isolate* isolate);

}  // namespace heapprof
