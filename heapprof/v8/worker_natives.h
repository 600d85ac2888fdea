// The native half of the worker runtime's globals: functions the JavaScript
// prelude calls where a real implementation lives in V8 or in a C library.
#pragma once

#include <v8.h>

#include <string>

namespace heapprof::internal {

// An object of native functions handed to the prelude's installer:
// consoleWrite(level, text), utf8Encode(string) -> Uint8Array,
// utf8Decode(Uint8Array) -> string. `state` is the WorkerRuntime::State.
v8::MaybeLocal<v8::Object> MakeWorkerNatives(v8::Local<v8::Context> context, void* state);

// The bytes of a body the prelude read: a string (as UTF-8) or a Uint8Array.
std::string BodyBytes(v8::Isolate* isolate, v8::Local<v8::Value> body);

}  // namespace heapprof::internal
