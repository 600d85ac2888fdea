// The native half of the worker runtime's globals: functions the JavaScript
// prelude calls where a real implementation lives in V8 or in a C library.
#pragma once

#include <v8.h>

#include <string>
#include <string_view>

namespace heapprof::internal {

// An object of native functions handed to the prelude's installer:
// consoleWrite(level, text), utf8Encode(string) -> Uint8Array,
// utf8Decode(bytes) -> string, structuredClone(value) (V8's serializer),
// ownStrings(fn, name) (fn behind a native function whose string results are
// copies of their own), base64Functions(errorFactory) (atob and btoa),
// jsonResponder(finish) (Response.json with V8's serializer), the crypto primitives of worker_crypto.h and the zlib
// streams of worker_compression.h. `state` is the WorkerRuntime::State.
v8::MaybeLocal<v8::Object> MakeWorkerNatives(v8::Local<v8::Context> context, void* state);

// The prelude's `libraries`: { load() }, which compiles and runs the libraries
// bundle (kWorkerLibrariesSource) at its first call and answers what the
// bundle's own load() does (libraries.js's namespace). Until a worker makes a
// stream, a URLPattern or a Durable Object, the bundle is not even compiled:
// V8 keeps no script, no function list and no pre-parse data of it.
v8::MaybeLocal<v8::Object> MakeWorkerLibraries(v8::Local<v8::Context> context);

// Whether text is an http(s) URL whose parse gives it back unchanged as href:
// lower-case scheme and host, no userinfo, port or fragment, a path and query
// of printable ASCII that no encode set touches, and no dot segment.
bool IsNormalHttpHref(std::string_view text);

// The bytes of an ArrayBuffer or an ArrayBufferView (a view into V8's memory,
// valid until JS runs again); false for any other value.
bool ViewBytes(v8::Local<v8::Value> value, std::string_view* out);

// The bytes of a body the prelude read: a string (as UTF-8) or a Uint8Array.
std::string BodyBytes(v8::Isolate* isolate, v8::Local<v8::Value> body);

}  // namespace heapprof::internal
