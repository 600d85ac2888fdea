// Which isolates heapprof's collectors hold: V8 has one sampler per isolate,
// so a Session (one window) and a Sampler (always on) exclude each other.
#pragma once

#include <cstdint>
#include <string>

#include "heapprof/core/status.h"

namespace v8 {
class Isolate;
}  // namespace v8

namespace heapprof::internal {

enum class IsolateHolder { kSession, kSampler };

// Claims the isolate for `holder`; false (and `why` says who holds it) if taken.
bool ClaimIsolate(v8::Isolate* isolate, IsolateHolder holder, std::string* why);
void ReleaseIsolate(v8::Isolate* isolate);

// Checks the options every collector shares (an isolate, the interval, the
// stack depth, the sample cap), then claims the isolate for `holder`.
Status ClaimForSampling(v8::Isolate* isolate, IsolateHolder holder, uint64_t interval_bytes, int max_stack_depth,
                        uint64_t max_samples);

}  // namespace heapprof::internal
