// The JavaScript half of the worker runtime: the web globals a worker
// expects, from heapprof/v8/worker_prelude.js (embedded at build time).
#pragma once

namespace heapprof::internal {

// A script whose completion value is a function(natives) that installs the
// globals and returns the runtime's internals: { makeRequest, makeContext,
// makeFetchEvent, readResponse, fetchListeners, runNextTimer }. `natives` is
// MakeWorkerNatives()'s object.
extern const char kWorkerPreludeSource[];

// The resource name the prelude's frames carry in stacks and profiles.
inline constexpr const char* kWorkerPreludeName = "heapprof:runtime";

}  // namespace heapprof::internal
