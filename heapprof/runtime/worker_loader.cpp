// Loading a worker: ES modules (with relative imports) or classic scripts,
// told apart by whether the file imports or exports anything.
#include <v8.h>

#include <cstring>
#include <filesystem>
#include <optional>
#include <system_error>

#include "heapprof/core/file_io.h"
#include "heapprof/runtime/worker_runtime.h"
#include "heapprof/runtime/worker_state.h"
#include "heapprof/v8/v8_util.h"

namespace heapprof {

using internal::NewString;
using internal::WorkerScope;

namespace {

namespace fs = std::filesystem;

// The worker being loaded on this thread. V8's resolve callback is a plain
// function pointer called synchronously inside InstantiateModule, so the
// loader is reached through this instead of isolate or context slots that
// other heapprof code might use.
thread_local WorkerRuntime::State* g_loading = nullptr;

std::string Canonical(const std::string& path) {
  std::error_code ec;
  fs::path p = fs::weakly_canonical(fs::absolute(path, ec), ec);
  return ec ? path : p.string();
}

// The name a script goes by in V8 (stack traces, Error.stack, profile frames):
// its path relative to the main module's folder, as workerd names modules by
// their config names, so no absolute path of the user's machine reaches a
// response; heapprof's source-map search resolves such names against the
// worker's folder.
std::string ScriptName(const WorkerRuntime::State* state, const std::string& path) {
  if (state->module_root.empty() || !fs::path(path).is_absolute()) return path;
  std::string relative = fs::path(path).lexically_relative(state->module_root).string();
  return relative.empty() ? path : relative;
}

v8::MaybeLocal<v8::Module> CompileModule(v8::Isolate* isolate, std::string_view source, const std::string& name) {
  v8::ScriptOrigin origin(isolate, NewString(isolate, name), 0, 0, false, -1, v8::Local<v8::Value>(), false, false,
                          /*is_module=*/true);
  v8::ScriptCompiler::Source compiler_source(NewString(isolate, source), origin);
  return v8::ScriptCompiler::CompileModule(isolate, &compiler_source);
}

void ThrowError(v8::Isolate* isolate, const std::string& message) {
  isolate->ThrowException(v8::Exception::Error(NewString(isolate, message)));
}

// A built-in module's evaluation: its exports are the values of the
// prelude's object, read now.
v8::MaybeLocal<v8::Value> EvaluateBuiltin(v8::Local<v8::Context> context, v8::Local<v8::Module> module) {
  v8::Isolate* isolate = context->GetIsolate();
  WorkerRuntime::State* state = g_loading;
  for (const auto& [known, exports_global] : state->builtin_modules) {
    if (known.Get(isolate) != module) continue;
    v8::Local<v8::Object> exports = exports_global.Get(isolate);
    v8::Local<v8::Array> names;
    if (!exports->GetOwnPropertyNames(context, v8::SKIP_SYMBOLS).ToLocal(&names)) return {};
    for (uint32_t i = 0; i < names->Length(); ++i) {
      v8::Local<v8::Value> name;
      v8::Local<v8::Value> value;
      if (!names->Get(context, i).ToLocal(&name) || !exports->Get(context, name).ToLocal(&value) ||
          module->SetSyntheticModuleExport(isolate, name.As<v8::String>(), value).IsNothing()) {
        return {};
      }
    }
    return v8::Undefined(isolate);
  }
  ThrowError(isolate, "heapprof: a built-in module was evaluated that the loader did not make");
  return {};
}

// The synthetic module whose exports are `exports`' own string keys (one
// module per exports object: node:buffer and buffer are the same module).
v8::MaybeLocal<v8::Module> BuiltinModule(WorkerRuntime::State* state, v8::Local<v8::Context> context,
                                         const std::string& name, v8::Local<v8::Object> exports) {
  v8::Isolate* isolate = context->GetIsolate();
  for (const auto& [module, known] : state->builtin_modules) {
    if (known.Get(isolate)->StrictEquals(exports)) return module.Get(isolate);
  }
  v8::Local<v8::Array> names;
  if (!exports->GetOwnPropertyNames(context, v8::SKIP_SYMBOLS).ToLocal(&names)) return {};
  std::vector<v8::Local<v8::String>> export_names;
  for (uint32_t i = 0; i < names->Length(); ++i) {
    v8::Local<v8::Value> key;
    if (!names->Get(context, i).ToLocal(&key)) return {};
    export_names.push_back(key.As<v8::String>());
  }
  v8::Local<v8::Module> module =
      v8::Module::CreateSyntheticModule(isolate, NewString(isolate, name), export_names, EvaluateBuiltin);
  state->builtin_modules.emplace_back(v8::Global<v8::Module>(isolate, module),
                                      v8::Global<v8::Object>(isolate, exports));
  return module;
}

// The exports of a built-in module from the prelude (cloudflare:workers, or
// node:NAME / NAME under the compatibility flags), else empty; false when
// the prelude threw.
bool BuiltinExports(WorkerRuntime::State* state, v8::Local<v8::Context> context, const std::string& spec,
                    v8::Local<v8::Object>* out) {
  v8::Isolate* isolate = context->GetIsolate();
  v8::Local<v8::Value> result;
  if (spec == "cloudflare:workers") {
    v8::Local<v8::Value> env = state->env.Get(isolate);
    if (!state->Internal("cloudflareWorkersModule")
             .As<v8::Function>()
             ->Call(context, v8::Undefined(isolate), 1, &env)
             .ToLocal(&result)) {
      return false;
    }
  } else {
    v8::Local<v8::Value> arg = NewString(isolate, spec);
    if (!state->Internal("nodeModule")
             .As<v8::Function>()
             ->Call(context, v8::Undefined(isolate), 1, &arg)
             .ToLocal(&result)) {
      return false;
    }
  }
  if (result->IsObject()) *out = result.As<v8::Object>();
  return true;
}

// The default export of a module that is not JavaScript, by wrangler's
// default module rules: a Text module (.txt .html .sql) is its string, a
// Data module (.bin) an ArrayBuffer of its bytes, a CompiledWasm module
// (.wasm) a WebAssembly.Module, as workerd makes them. nullopt for a
// JavaScript module; an empty handle when the wasm did not compile.
std::optional<v8::Local<v8::Value>> NonJsModuleValue(v8::Isolate* isolate, const std::string& path,
                                                     const std::string& bytes) {
  const std::string ext = fs::path(path).extension().string();
  if (ext == ".txt" || ext == ".html" || ext == ".sql") return NewString(isolate, bytes).As<v8::Value>();
  if (ext == ".bin") {
    v8::Local<v8::ArrayBuffer> buffer = v8::ArrayBuffer::New(isolate, bytes.size());
    if (!bytes.empty()) std::memcpy(buffer->GetBackingStore()->Data(), bytes.data(), bytes.size());
    return buffer.As<v8::Value>();
  }
  if (ext == ".wasm") {
    v8::Local<v8::WasmModuleObject> module;
    const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
    if (!v8::WasmModuleObject::Compile(isolate, v8::MemorySpan<const uint8_t>(data, bytes.size())).ToLocal(&module)) {
      return v8::Local<v8::Value>();
    }
    return module.As<v8::Value>();
  }
  return std::nullopt;
}

v8::MaybeLocal<v8::Module> ResolveImport(v8::Local<v8::Context> context, v8::Local<v8::String> specifier,
                                         v8::Local<v8::FixedArray> /*import_assertions*/,
                                         v8::Local<v8::Module> referrer) {
  v8::Isolate* isolate = context->GetIsolate();
  WorkerRuntime::State* state = g_loading;
  std::string spec = internal::ToStdString(isolate, specifier);
  std::string from;
  for (const auto& [path, module] : state->modules) {
    if (module.Get(isolate) == referrer) from = path;
  }
  // workerd's built-in modules: cloudflare:workers, and the node: modules
  // of nodejs_compat (bare names too) that the runtime has.
  const bool relative = spec.starts_with("./") || spec.starts_with("../") || spec.starts_with("/");
  if (!relative) {
    v8::Local<v8::Object> exports;
    if (!BuiltinExports(state, context, spec, &exports)) return {};
    if (!exports.IsEmpty()) {
      const std::string name = spec.starts_with("node:") || spec.starts_with("cloudflare:") ? spec : "node:" + spec;
      return BuiltinModule(state, context, name, exports);
    }
  }
  // The others (cloudflare:sockets' connect, node: modules without the flag
  // or that the runtime lacks) have no counterpart here; no bundle can carry
  // them, so say where the worker runs.
  if (spec.starts_with("cloudflare:") || spec.starts_with("node:")) {
    ThrowError(isolate, "cannot import \"" + spec + "\" from " + from + ": \"" + spec +
                            "\" is not available in heapprof's embedded runtime; profile this worker in workerd "
                            "with --runtime workerd");
    return {};
  }
  if (!relative) {
    ThrowError(isolate, "cannot import \"" + spec + "\" from " + from +
                            ": heapprof resolves relative paths only (bundle package imports first)");
    return {};
  }
  std::string path = Canonical((fs::path(from).parent_path() / spec).lexically_normal().string());
  for (const auto& [known, module] : state->modules) {
    if (known == path) return module.Get(isolate);
  }
  // Regular files only, opened without blocking: an import of a FIFO or a device must not hang the load.
  Result<std::string> source = ReadFileBytes(path, {.regular_only = true});
  if (!source.ok()) {
    ThrowError(isolate, "cannot import \"" + spec + "\" from " + from + ": " + source.status().message());
    return {};
  }
  if (std::optional<v8::Local<v8::Value>> value = NonJsModuleValue(isolate, path, source.value())) {
    if (value->IsEmpty()) return {};  // the wasm did not compile: its error is pending
    v8::Local<v8::Object> exports = v8::Object::New(isolate);
    if (exports->Set(context, NewString(isolate, "default"), *value).IsNothing()) return {};
    v8::Local<v8::Module> module;
    if (!BuiltinModule(state, context, ScriptName(state, path), exports).ToLocal(&module)) return {};
    state->modules.emplace_back(path, v8::Global<v8::Module>(isolate, module));
    return module;
  }
  v8::Local<v8::Module> module;
  if (!CompileModule(isolate, source.value(), ScriptName(state, path)).ToLocal(&module))
    return {};  // SyntaxError pending
  state->modules.emplace_back(path, v8::Global<v8::Module>(isolate, module));
  return module;
}

// Sets the handler of a classic script: fetch listeners, else a global fetch.
Status FindScriptHandler(WorkerRuntime::State* state, v8::Local<v8::Context> context, const std::string& name) {
  v8::Isolate* isolate = state->v8();
  if (state->Internal("fetchListeners").As<v8::Array>()->Length() > 0) {
    state->kind = WorkerKind::kEventListener;
    return Status::Ok();
  }
  v8::Local<v8::Value> fetch;
  // The runtime's own fetch (subrequests) is not a handler.
  if (context->Global()->Get(context, NewString(isolate, "fetch")).ToLocal(&fetch) && fetch->IsFunction() &&
      !fetch->StrictEquals(state->Internal("subrequestFetch"))) {
    state->fetch.Reset(isolate, fetch.As<v8::Function>());
    state->receiver.Reset(isolate, v8::Undefined(isolate));
    state->kind = WorkerKind::kGlobalFetch;
    return Status::Ok();
  }
  return Error(ErrorCode::kScriptError,
               name +
                   " defines no fetch handler: export default { fetch(request, env, ctx) {...} } from a "
                   "module, or call addEventListener('fetch', ...) or define function fetch() in a script");
}

Status Instantiate(WorkerRuntime::State* state, v8::Local<v8::Context> context, v8::Local<v8::Module> module,
                   const v8::TryCatch& try_catch, const std::string& what) {
  WorkerRuntime::State* outer = g_loading;  // a Durable Object's isolate may load while its caller's does
  g_loading = state;
  bool instantiated = module->InstantiateModule(context, ResolveImport).FromMaybe(false);
  g_loading = outer;
  return instantiated ? Status::Ok() : internal::ScriptFailure(state, try_catch, what);
}

// Runs an instantiated module's top level, microtasks and timers until it settles.
Status Evaluate(WorkerRuntime::State* state, v8::Local<v8::Context> context, v8::Local<v8::Module> module,
                const v8::TryCatch& try_catch, const std::string& what) {
  v8::Isolate* isolate = state->v8();
  v8::Local<v8::Value> evaluation;
  WorkerRuntime::State* outer = g_loading;
  g_loading = state;  // for the built-in modules' evaluation steps
  bool evaluated = module->Evaluate(context).ToLocal(&evaluation);
  g_loading = outer;
  if (!evaluated) return internal::ScriptFailure(state, try_catch, what);
  auto settled = [&] {
    return !evaluation->IsPromise() || evaluation.As<v8::Promise>()->State() != v8::Promise::kPending;
  };
  HEAPPROF_RETURN_IF_ERROR(internal::RunUntil(state, settled, what.c_str()));
  if (module->GetStatus() == v8::Module::kErrored) {
    return Error(ErrorCode::kScriptError,
                 what + ": " + internal::DescribeValue(isolate, context, module->GetException()));
  }
  if (evaluation->IsPromise() && evaluation.As<v8::Promise>()->State() == v8::Promise::kRejected) {
    return Error(ErrorCode::kScriptError,
                 what + ": " + internal::DescribeValue(isolate, context, evaluation.As<v8::Promise>()->Result()));
  }
  return Status::Ok();
}

// The default export of an evaluated module and its fetch method; `shape` says
// what the export should look like, for the error.
Status DefaultFetch(v8::Local<v8::Context> context, v8::Local<v8::Module> module, const std::string& filename,
                    const std::string& shape, v8::Local<v8::Value>* receiver, v8::Local<v8::Function>* fetch,
                    v8::Local<v8::Function>* entrypoint_fetch = nullptr) {
  v8::Isolate* isolate = context->GetIsolate();
  v8::Local<v8::Object> ns = module->GetModuleNamespace().As<v8::Object>();
  v8::Local<v8::Value> handler;
  if (!ns->Get(context, NewString(isolate, "default")).ToLocal(&handler) || handler->IsUndefined()) {
    return Error(ErrorCode::kScriptError, filename + " has no default export: it must `export default " + shape + "`");
  }
  if (handler->IsFunction() && entrypoint_fetch != nullptr) {
    // A class extending WorkerEntrypoint: the prelude makes an instance per request.
    v8::Local<v8::Value> fetch_of;
    if (!(*entrypoint_fetch)->Call(context, v8::Undefined(isolate), 1, &handler).ToLocal(&fetch_of)) {
      return Error(ErrorCode::kScriptError, filename + ": its WorkerEntrypoint class could not be read");
    }
    if (fetch_of->IsFunction()) {
      *receiver = v8::Undefined(isolate);
      *fetch = fetch_of.As<v8::Function>();
      return Status::Ok();
    }
    if (fetch_of->IsUndefined()) {
      return Error(ErrorCode::kScriptError,
                   filename + ": the default export's WorkerEntrypoint class has no fetch method");
    }
  }
  v8::Local<v8::Value> method;
  if (!handler->IsObject() || !handler.As<v8::Object>()->Get(context, NewString(isolate, "fetch")).ToLocal(&method) ||
      !method->IsFunction()) {
    return Error(ErrorCode::kScriptError, filename + ": the default export has no fetch method (" + shape + ")");
  }
  *receiver = handler;
  *fetch = method.As<v8::Function>();
  return Status::Ok();
}

// Hands env's Durable Object namespaces the main module's exports (their
// classes); a binding whose class the module does not export is an error, as
// in workerd. A classic script exports nothing (`exports` is null).
Status SetDurableObjectClasses(WorkerRuntime::State* state, v8::Local<v8::Context> context,
                               v8::Local<v8::Value> exports, const std::string& filename) {
  if (!state->has_durable_objects) return Status::Ok();
  v8::Isolate* isolate = state->v8();
  v8::TryCatch try_catch(isolate);
  v8::Local<v8::Value> args[] = {exports, state->env.Get(isolate)};
  v8::Local<v8::Value> problems;
  if (!state->Internal("setDurableObjectExports")
           .As<v8::Function>()
           ->Call(context, v8::Undefined(isolate), 2, args)
           .ToLocal(&problems)) {
    return internal::ScriptFailure(state, try_catch, "loading " + filename);
  }
  v8::Local<v8::Array> list = problems.As<v8::Array>();
  if (list->Length() == 0) return Status::Ok();
  std::string text;
  for (uint32_t i = 0; i < list->Length(); ++i) {
    text += (i ? "; " : "") + internal::ValueToString(isolate, context, list->Get(context, i).ToLocalChecked());
  }
  return Error(
      ErrorCode::kScriptError,
      filename + ": " + text + (exports->IsNull() ? " (Durable Object classes are exported by an ES module)" : ""));
}

}  // namespace

namespace internal {

Status LoadFetchHandler(WorkerRuntime::State* state, const std::string& path) {
  const std::string what = "loading the --fetch-handler module " + path;
  Result<std::string> source = ReadFileBytes(path, {.regular_only = true});
  if (!source.ok()) return Error(source.status().code(), "--fetch-handler: " + source.status().message());
  v8::Isolate* isolate = state->v8();
  WorkerScope scope(state);
  internal::Watchdog::Scope deadline(*state->watchdog);
  v8::Local<v8::Context> context = scope.context();
  v8::TryCatch try_catch(isolate);
  const std::string filename = Canonical(path);
  v8::Local<v8::Module> module;
  if (!CompileModule(isolate, source.value(), ScriptName(state, filename)).ToLocal(&module)) {
    return ScriptFailure(state, try_catch, what);
  }
  state->modules.emplace_back(filename, v8::Global<v8::Module>(isolate, module));
  HEAPPROF_RETURN_IF_ERROR(Instantiate(state, context, module, try_catch, what));
  HEAPPROF_RETURN_IF_ERROR(Evaluate(state, context, module, try_catch, what));
  v8::Local<v8::Value> receiver;
  v8::Local<v8::Function> fetch;
  HEAPPROF_RETURN_IF_ERROR(DefaultFetch(
      context, module, filename, "{ async fetch(request) { ... return new Response(...); } }", &receiver, &fetch));
  v8::Local<v8::Value> args[] = {receiver, fetch, NewString(isolate, filename)};
  v8::Local<v8::Value> ignored;
  if (!state->Internal("setFetchHandler")
           .As<v8::Function>()
           ->Call(context, v8::Undefined(isolate), 3, args)
           .ToLocal(&ignored)) {
    return ScriptFailure(state, try_catch, what);
  }
  return Status::Ok();
}

}  // namespace internal

Status WorkerRuntime::LoadFile(const std::string& path) {
  HEAPPROF_ASSIGN_OR_RETURN(std::string source, ReadFileBytes(path));
  const std::string canonical = Canonical(path);
  if (state_->kind == WorkerKind::kNotLoaded) state_->module_root = fs::path(canonical).parent_path().string();
  return Load(source, canonical);
}

Status WorkerRuntime::Load(std::string_view source, const std::string& filename) {
  State* state = state_.get();
  if (state->kind != WorkerKind::kNotLoaded) {
    return Error(ErrorCode::kFailedPrecondition, "a worker is already loaded in this runtime");
  }
  if (state->isolate.heap_limit_reached()) {
    return Error(ErrorCode::kResourceExhausted, "the worker reached its heap limit earlier");
  }
  v8::Isolate* isolate = state->v8();
  WorkerScope scope(state);
  internal::Watchdog::Scope deadline(*state->watchdog);
  v8::Local<v8::Context> context = scope.context();
  v8::TryCatch try_catch(isolate);
  const std::string what = "loading " + filename;

  // The worker's objects load the same module in their isolates, for their classes.
  if (state->owned_objects != nullptr)
    state->owned_objects->SetMainModule(std::string(source), filename, state->module_root);
  v8::Local<v8::Module> module;
  const std::string name = ScriptName(state, filename);
  if (!CompileModule(isolate, source, name).ToLocal(&module)) {
    // Not valid as a module; maybe a sloppy-mode classic script.
    v8::TryCatch script_try(isolate);
    v8::ScriptOrigin origin(isolate, NewString(isolate, name));
    v8::Local<v8::Script> script;
    if (!v8::Script::Compile(context, NewString(isolate, source), &origin).ToLocal(&script)) {
      return internal::ScriptFailure(state, try_catch, what);
    }
    v8::Local<v8::Value> ignored;
    if (!script->Run(context).ToLocal(&ignored)) return internal::ScriptFailure(state, script_try, what);
    HEAPPROF_RETURN_IF_ERROR(internal::RunUntil(
        state, [] { return true; }, what.c_str()));
    return FindScriptHandler(state, context, filename);
  }
  state->modules.emplace_back(filename, v8::Global<v8::Module>(isolate, module));

  HEAPPROF_RETURN_IF_ERROR(Instantiate(state, context, module, try_catch, what));

  v8::Local<v8::Object> ns = module->GetModuleNamespace().As<v8::Object>();
  v8::Local<v8::Array> exports;
  // No ONLY_ENUMERABLE: that check would read the (still uninitialised) bindings;
  // no symbols: every namespace has @@toStringTag.
  if (!ns->GetPropertyNames(context, v8::KeyCollectionMode::kOwnOnly, v8::SKIP_SYMBOLS,
                            v8::IndexFilter::kIncludeIndices, v8::KeyConversionMode::kNoNumbers)
           .ToLocal(&exports)) {
    return internal::ScriptFailure(state, try_catch, what);
  }
  if (module->GetModuleRequests()->Length() == 0 && exports->Length() == 0) {
    // No import, no export: a classic script (globals, addEventListener).
    state->modules.clear();
    v8::ScriptOrigin origin(isolate, NewString(isolate, name));
    v8::Local<v8::Script> script;
    v8::Local<v8::Value> ignored;
    if (!v8::Script::Compile(context, NewString(isolate, source), &origin).ToLocal(&script) ||
        !script->Run(context).ToLocal(&ignored)) {
      return internal::ScriptFailure(state, try_catch, what);
    }
    HEAPPROF_RETURN_IF_ERROR(internal::RunUntil(
        state, [] { return true; }, what.c_str()));
    HEAPPROF_RETURN_IF_ERROR(
        SetDurableObjectClasses(state, context, v8::Local<v8::Value>(v8::Null(isolate)), filename));
    return FindScriptHandler(state, context, filename);
  }

  HEAPPROF_RETURN_IF_ERROR(Evaluate(state, context, module, try_catch, what));
  HEAPPROF_RETURN_IF_ERROR(SetDurableObjectClasses(state, context, module->GetModuleNamespace(), filename));
  v8::Local<v8::Value> handler;
  v8::Local<v8::Function> fetch;
  v8::Local<v8::Function> entrypoint_fetch = state->Internal("entrypointFetch").As<v8::Function>();
  HEAPPROF_RETURN_IF_ERROR(DefaultFetch(context, module, filename, "{ async fetch(request, env, ctx) { ... } }",
                                        &handler, &fetch, &entrypoint_fetch));
  state->receiver.Reset(isolate, handler);
  state->fetch.Reset(isolate, fetch);
  state->kind = WorkerKind::kModule;
  return Status::Ok();
}

}  // namespace heapprof
