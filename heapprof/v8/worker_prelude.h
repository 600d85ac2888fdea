// The JavaScript half of the worker runtime: the web-ish globals a worker
// expects, written in JS because that is what they are in spirit.
#pragma once

namespace heapprof::internal {

// A script whose completion value is a function(consoleWrite) that installs
// the globals and returns the runtime's internals: { makeRequest, makeContext,
// makeFetchEvent, fetchListeners, runNextTimer, pendingTimers }.
const char* WorkerPreludeSource();

// The resource name the prelude's frames carry in stacks and profiles.
inline constexpr const char* kWorkerPreludeName = "heapprof:runtime";

}  // namespace heapprof::internal
