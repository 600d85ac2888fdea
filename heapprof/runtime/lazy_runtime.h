// What lets the runtime's JavaScript cost a worker's heap only once used:
// the embedded bundles (worker_prelude.h) as V8 strings whose characters stay
// in the binary, and lazy data properties for the prelude's globals.
#pragma once

#include <v8.h>

namespace heapprof::internal {

// `ascii` is one of the embedded bundles (esbuild writes them ASCII-only,
// WorkerPrelude.cmake) and outlives every isolate: V8 reads it in place. V8
// keeps a script's source as long as its functions live (lazy compilation
// reads it again); made with NewFromUtf8 it would be a copy on every heap.
v8::Local<v8::String> RuntimeScriptSource(v8::Isolate* isolate, const char* ascii);

// natives.lazyProperty(object, name, make, enumerable): a data property of
// `object` whose value is make(name)'s, called at the property's first read
// (V8's lazy data property, which then holds the value itself): an API whose
// module is built at first use still reads as a plain, writable and
// configurable data property.
void LazyProperty(const v8::FunctionCallbackInfo<v8::Value>& info);

}  // namespace heapprof::internal
