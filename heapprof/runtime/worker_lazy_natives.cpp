// The natives that load parts of the runtime at their first use:
// HTMLRewriter's WebAssembly module and engine, the node: modules, lazy
// globals; and node:async_hooks' frame as V8's continuation data.
#include <cstring>

#include "heapprof/runtime/lazy_runtime.h"
#include "heapprof/runtime/native_callbacks.h"
#include "heapprof/runtime/worker_natives.h"
#include "heapprof/runtime/worker_prelude.h"
#include "heapprof/v8/isolate_state.h"
#include "heapprof/v8/v8_util.h"

// html-rewriter-wasm's WebAssembly module, embedded by WorkerPrelude.cmake.
extern "C" const unsigned char heapprof_html_rewriter_wasm[];
extern "C" const unsigned char heapprof_html_rewriter_wasm_end[];

namespace heapprof::internal {

// htmlRewriterWasm() -> ArrayBuffer: a copy of lol-html's WebAssembly module
// for HTMLRewriter's first use in the isolate. A copy (not a view of the
// binary's read-only bytes) because JavaScript may write into an ArrayBuffer;
// WebAssembly.Module keeps its own, and this one is garbage after.
void HtmlRewriterWasm(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  const size_t size = static_cast<size_t>(heapprof_html_rewriter_wasm_end - heapprof_html_rewriter_wasm);
  v8::Local<v8::ArrayBuffer> buffer = v8::ArrayBuffer::New(isolate, size);
  std::memcpy(buffer->GetBackingStore()->Data(), heapprof_html_rewriter_wasm, size);
  info.GetReturnValue().Set(buffer);
}

namespace {

// Compiles and runs one of the runtime's scripts: its value, or empty with
// the exception pending.
v8::MaybeLocal<v8::Value> RunScript(v8::Local<v8::Context> context, const char* name, const char* source) {
  v8::Isolate* isolate = context->GetIsolate();
  v8::ScriptOrigin origin(isolate, NewString(isolate, name));
  v8::Local<v8::Script> script;
  if (!v8::Script::Compile(context, RuntimeScriptSource(isolate, source), &origin).ToLocal(&script)) return {};
  return script->Run(context);
}

// Answers a runtime script's value; its errors propagate as JavaScript exceptions.
void RunRuntimeScript(const v8::FunctionCallbackInfo<v8::Value>& info, const char* name, const char* source) {
  v8::Local<v8::Value> value;
  if (RunScript(info.GetIsolate()->GetCurrentContext(), name, source).ToLocal(&value)) {
    info.GetReturnValue().Set(value);
  }
}

}  // namespace

// htmlRewriterEngine() -> load(host): runs HTMLRewriter's engine script,
// compiled only now so that a worker without HTMLRewriter holds neither its
// source nor its code.
void HtmlRewriterEngine(const v8::FunctionCallbackInfo<v8::Value>& info) {
  RunRuntimeScript(info, kWorkerHtmlRewriterName, kWorkerHtmlRewriterSource);
}

namespace {

// libraries.load() (MakeWorkerLibraries): the bundle's value is { load }.
void LoadLibraries(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  v8::Local<v8::Context> context = isolate->GetCurrentContext();
  v8::Local<v8::Value> bundle;
  v8::Local<v8::Value> load;
  v8::Local<v8::Value> exports;
  if (!RunScript(context, kWorkerLibrariesName, kWorkerLibrariesSource).ToLocal(&bundle)) {
    return;  // the exception propagates
  }
  if (!bundle->IsObject() || !bundle.As<v8::Object>()->Get(context, NewString(isolate, "load")).ToLocal(&load) ||
      !load->IsFunction()) {
    if (!isolate->IsExecutionTerminating()) ThrowTypeError(isolate, "the libraries bundle has no load()");
    return;
  }
  if (load.As<v8::Function>()->Call(context, bundle, 0, nullptr).ToLocal(&exports)) info.GetReturnValue().Set(exports);
}

}  // namespace

v8::MaybeLocal<v8::Object> MakeWorkerLibraries(v8::Local<v8::Context> context) {
  v8::Isolate* isolate = context->GetIsolate();
  v8::Local<v8::Object> libraries = v8::Object::New(isolate);
  v8::Local<v8::Function> load;
  if (!v8::Function::New(context, LoadLibraries).ToLocal(&load) ||
      libraries->Set(context, NewString(isolate, "load"), load).IsNothing()) {
    return {};
  }
  return libraries;
}

// nodeLibraries() -> load(host): runs the node: modules' script
// (heapprof/runtime/js/node.js), compiled only at the worker's first import of a
// node: module.
void NodeLibraries(const v8::FunctionCallbackInfo<v8::Value>& info) {
  RunRuntimeScript(info, kWorkerNodeName, kWorkerNodeSource);
}

// webApis() -> function(require): the prelude's second script (worker_apis.js)
// as the body of that function, compiled only at the first use of one of its
// Web APIs. A function compiled apart from scripts stays out of the isolate's
// script cache, which would keep the bytecode of its top-level code.
void WebApis(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  v8::ScriptOrigin origin(isolate, NewString(isolate, kWorkerApisName));
  v8::ScriptCompiler::Source source(RuntimeScriptSource(isolate, kWorkerApisSource), origin);
  v8::Local<v8::String> require = NewString(isolate, "require");
  v8::Local<v8::Function> apis;
  if (v8::ScriptCompiler::CompileFunction(isolate->GetCurrentContext(), &source, 1, &require).ToLocal(&apis)) {
    info.GetReturnValue().Set(apis);
  }
}

// getAsyncFrame() / setAsyncFrame(frame): node:async_hooks' current frame
// as V8's continuation-preserved embedder data, which V8 stores on each
// promise reaction when it is made and restores while the reaction runs.
void GetAsyncFrame(const v8::FunctionCallbackInfo<v8::Value>& info) {
  info.GetReturnValue().Set(info.GetIsolate()->GetCurrentContext()->GetContinuationPreservedEmbedderData());
}
void SetAsyncFrame(const v8::FunctionCallbackInfo<v8::Value>& info) {
  info.GetIsolate()->GetCurrentContext()->SetContinuationPreservedEmbedderData(info[0]);
}

// lazyGlobals(names, make, enumerable = true): globals of the worker whose
// value is make(name), made at the name's first read (the isolate's
// lazy-globals table, heapprof/v8/lazy_globals.h): until then they take no
// room on the heap, where a lazy data property each would keep an accessor
// info, its foreign pointers and a property cell. nodejs_compat's Buffer and
// process are not enumerable, as in workerd. A global of the same name
// already there (V8's own console) is deleted first.
void AddLazyGlobals(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  LazyGlobals* table = LazyGlobalsOf(StateOf(info)->isolate);
  if (!info[0]->IsArray() || !info[1]->IsFunction() || table == nullptr) {
    ThrowTypeError(isolate, "lazyGlobals(names, make, enumerable)");
    return;
  }
  const bool enumerable = info[2]->IsUndefined() || info[2]->BooleanValue(isolate);
  v8::Local<v8::Context> context = isolate->GetCurrentContext();
  v8::Local<v8::Array> names = info[0].As<v8::Array>();
  for (uint32_t i = 0; i < names->Length(); ++i) {
    v8::Local<v8::Value> name;
    if (!names->Get(context, i).ToLocal(&name)) return;
    if (!name->IsString()) {
      ThrowTypeError(isolate, "lazyGlobals(names, make): a name is not a string");
      return;
    }
    // A global V8 made (console) gives way, as a lazy data property replaced it.
    if (context->Global()->Delete(context, name).IsNothing()) return;
    table->Add(isolate, ToStdString(isolate, name.As<v8::String>()), info[1].As<v8::Function>(), enumerable);
  }
}

}  // namespace heapprof::internal
