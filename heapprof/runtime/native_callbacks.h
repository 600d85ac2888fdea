// The natives behind the worker globals, by file, for MakeWorkerNatives'
// table (worker_natives.cpp), and the small helpers those files share.
#pragma once

#include <v8.h>

#include <cstddef>
#include <cstring>

#include "heapprof/runtime/worker_state.h"
#include "heapprof/v8/v8_util.h"

namespace heapprof::internal {

// The WorkerRuntime::State of a native made with MakeWorkerNatives' data.
inline WorkerRuntime::State* StateOf(const v8::FunctionCallbackInfo<v8::Value>& info) {
  return static_cast<WorkerRuntime::State*>(info.Data().As<v8::External>()->Value());
}

inline void ThrowTypeError(v8::Isolate* isolate, const char* message) {
  isolate->ThrowException(v8::Exception::TypeError(NewString(isolate, message)));
}

// A fresh Uint8Array holding `size` bytes copied from `data`.
inline v8::Local<v8::Uint8Array> NewBytes(v8::Isolate* isolate, const char* data, size_t size) {
  v8::Local<v8::ArrayBuffer> buffer = v8::ArrayBuffer::New(isolate, size);
  if (size > 0) std::memcpy(buffer->GetBackingStore()->Data(), data, size);
  return v8::Uint8Array::New(buffer, 0, size);
}

// worker_text_natives.cpp: utf8Encode(string), utf8Decode(bytes),
// structuredClone(value), ownStrings(fn, name), base64Functions(errorFactory),
// jsonResponder(finish).
void Utf8Encode(const v8::FunctionCallbackInfo<v8::Value>& info);
void Utf8Decode(const v8::FunctionCallbackInfo<v8::Value>& info);
void StructuredClone(const v8::FunctionCallbackInfo<v8::Value>& info);
void OwnStrings(const v8::FunctionCallbackInfo<v8::Value>& info);
void Base64Functions(const v8::FunctionCallbackInfo<v8::Value>& info);
void JsonResponder(const v8::FunctionCallbackInfo<v8::Value>& info);

// worker_http_natives.cpp: isNormalHref(text).
void IsNormalHref(const v8::FunctionCallbackInfo<v8::Value>& info);

// worker_lazy_natives.cpp: htmlRewriterWasm(), htmlRewriterEngine(),
// nodeLibraries(), webApis(), getAsyncFrame(), setAsyncFrame(frame),
// lazyGlobals(names, make, enumerable).
void HtmlRewriterWasm(const v8::FunctionCallbackInfo<v8::Value>& info);
void HtmlRewriterEngine(const v8::FunctionCallbackInfo<v8::Value>& info);
void NodeLibraries(const v8::FunctionCallbackInfo<v8::Value>& info);
void WebApis(const v8::FunctionCallbackInfo<v8::Value>& info);
void GetAsyncFrame(const v8::FunctionCallbackInfo<v8::Value>& info);
void SetAsyncFrame(const v8::FunctionCallbackInfo<v8::Value>& info);
void AddLazyGlobals(const v8::FunctionCallbackInfo<v8::Value>& info);

}  // namespace heapprof::internal
