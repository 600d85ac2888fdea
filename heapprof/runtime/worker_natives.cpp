// Native functions behind the worker globals: console output and UTF-8
// through V8's own conversion (TextEncoder, TextDecoder, byte bodies).
#include "heapprof/runtime/worker_natives.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "heapprof/runtime/durable_object_host.h"
#include "heapprof/runtime/lazy_runtime.h"
#include "heapprof/runtime/worker_compression.h"
#include "heapprof/runtime/worker_crypto.h"
#include "heapprof/runtime/worker_prelude.h"
#include "heapprof/runtime/worker_state.h"
#include "heapprof/v8/v8_util.h"

// html-rewriter-wasm's WebAssembly module, embedded by WorkerPrelude.cmake.
extern "C" const unsigned char heapprof_html_rewriter_wasm[];
extern "C" const unsigned char heapprof_html_rewriter_wasm_end[];

namespace heapprof::internal {
namespace {

WorkerRuntime::State* StateOf(const v8::FunctionCallbackInfo<v8::Value>& info) {
  return static_cast<WorkerRuntime::State*>(info.Data().As<v8::External>()->Value());
}

void ThrowTypeError(v8::Isolate* isolate, const char* message) {
  isolate->ThrowException(v8::Exception::TypeError(NewString(isolate, message)));
}

// console.* from JS: (level, text) -> the sink.
void ConsoleWrite(const v8::FunctionCallbackInfo<v8::Value>& info) {
  WorkerRuntime::State* state = StateOf(info);
  v8::Isolate* isolate = info.GetIsolate();
  v8::Local<v8::Context> context = isolate->GetCurrentContext();
  std::string level = ValueToString(isolate, context, info[0]);
  std::string text = ValueToString(isolate, context, info[1]);
  if (state->console) state->console(level, text);
}

// A fresh Uint8Array holding `size` bytes copied from `data`.
v8::Local<v8::Uint8Array> NewBytes(v8::Isolate* isolate, const char* data, size_t size) {
  v8::Local<v8::ArrayBuffer> buffer = v8::ArrayBuffer::New(isolate, size);
  if (size > 0) std::memcpy(buffer->GetBackingStore()->Data(), data, size);
  return v8::Uint8Array::New(buffer, 0, size);
}

// utf8Encode(string): the string's UTF-8 bytes; lone surrogates become U+FFFD
// (what the Encoding standard asks of TextEncoder).
void Utf8Encode(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  v8::Local<v8::String> s;
  // An absent argument is "", TextEncoder.encode()'s default (utf8Encode's callers always pass one).
  if (info[0]->IsUndefined()) {
    s = v8::String::Empty(isolate);
  } else if (!info[0]->ToString(isolate->GetCurrentContext()).ToLocal(&s)) {
    return;
  }
  // Utf8Length counts a lone surrogate as 3 bytes, as is its replacement.
  std::string bytes(static_cast<size_t>(s->Utf8Length(isolate)), '\0');
  s->WriteUtf8(isolate, bytes.data(), static_cast<int>(bytes.size()), nullptr,
               v8::String::NO_NULL_TERMINATION | v8::String::REPLACE_INVALID_UTF8);
  info.GetReturnValue().Set(NewBytes(isolate, bytes.data(), bytes.size()));
}

// utf8Decode(view): the bytes of an ArrayBuffer or a view as a string; invalid
// sequences become U+FFFD (V8's decoder, as TextDecoder without `fatal`).
void Utf8Decode(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  std::string_view bytes;
  if (!ViewBytes(info[0], &bytes)) {
    ThrowTypeError(isolate, "expected an ArrayBuffer or an ArrayBufferView");
    return;
  }
  const char* data = bytes.data();
  size_t size = bytes.size();
  if (size > static_cast<size_t>(v8::String::kMaxLength)) {
    ThrowTypeError(isolate, "the bytes are longer than the longest string V8 can hold");
    return;
  }
  v8::Local<v8::String> s;
  if (!v8::String::NewFromUtf8(isolate, data, v8::NewStringType::kNormal, static_cast<int>(size)).ToLocal(&s)) return;
  info.GetReturnValue().Set(s);
}

// structuredClone(value): a deep copy through V8's own serializer, so what
// can be cloned (and the DataCloneError for what cannot) is V8's answer.
void StructuredClone(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  v8::Local<v8::Context> context = isolate->GetCurrentContext();
  v8::ValueSerializer serializer(isolate);
  serializer.WriteHeader();
  if (serializer.WriteValue(context, info[0]).IsNothing()) return;  // threw DataCloneError
  std::pair<uint8_t*, size_t> buffer = serializer.Release();
  v8::ValueDeserializer deserializer(isolate, buffer.first, buffer.second);
  v8::Local<v8::Value> copy;
  bool ok = deserializer.ReadHeader(context).FromMaybe(false) && deserializer.ReadValue(context).ToLocal(&copy);
  std::free(buffer.first);
  if (ok) info.GetReturnValue().Set(copy);
}

// A copy of `s` in a new flat string of its own. What V8 makes for
// slice(), a regular expression's groups or `+` is a view into (or a tree
// over) another string, which keeps all of that string alive.
v8::Local<v8::String> OwnString(v8::Isolate* isolate, v8::Local<v8::String> s) {
  const int length = s->Length();
  if (length < 2) return s;  // "" and one-character strings are V8's shared constants
  constexpr int kStackChars = 256;
  v8::Local<v8::String> copy;
  if (s->IsOneByte()) {
    uint8_t stack[kStackChars];
    std::vector<uint8_t> heap(length > kStackChars ? length : 0);
    uint8_t* chars = length > kStackChars ? heap.data() : stack;
    s->WriteOneByte(isolate, chars, 0, length, v8::String::NO_NULL_TERMINATION);
    if (!v8::String::NewFromOneByte(isolate, chars, v8::NewStringType::kNormal, length).ToLocal(&copy)) return s;
  } else {
    uint16_t stack[kStackChars];
    std::vector<uint16_t> heap(length > kStackChars ? length : 0);
    uint16_t* chars = length > kStackChars ? heap.data() : stack;
    s->Write(isolate, chars, 0, length, v8::String::NO_NULL_TERMINATION);
    if (!v8::String::NewFromTwoByte(isolate, chars, v8::NewStringType::kNormal, length).ToLocal(&copy)) return s;
  }
  return copy;
}

// The body of a function made by ownStrings: calls the wrapped JS function
// (the Data) with this call's receiver and arguments, and answers its result,
// a string result as a copy of its own.
void CallOwningStrings(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  v8::Local<v8::Context> context = isolate->GetCurrentContext();
  constexpr int kMaxArgs = 4;
  v8::Local<v8::Value> args[kMaxArgs];
  const int argc = std::min(info.Length(), kMaxArgs);
  for (int i = 0; i < argc; i++) args[i] = info[i];
  v8::Local<v8::Value> result;
  if (!info.Data().As<v8::Function>()->Call(context, info.This(), argc, args).ToLocal(&result)) return;  // it threw
  if (result->IsString()) result = OwnString(isolate, result.As<v8::String>());
  info.GetReturnValue().Set(result);
}

// ownStrings(fn, name): a native function named `name`, with fn's length,
// that answers what fn answers (up to 4 arguments), a string as a new flat
// copy. The runtime's getters that workerd implements in C++ (URL parts,
// request.url, headers.get) go through it, so that, as in workerd, a string a
// worker keeps holds only its own characters, and is charged to the worker's
// frame that asked for it: the copy is made after fn's frame has returned,
// and a native function has no JavaScript frame of its own.
void OwnStrings(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  v8::Local<v8::Context> context = isolate->GetCurrentContext();
  if (!info[0]->IsFunction() || !info[1]->IsString()) {
    ThrowTypeError(isolate, "ownStrings(fn, name) takes a function and a name");
    return;
  }
  v8::Local<v8::Function> fn = info[0].As<v8::Function>();
  v8::Local<v8::Value> length;
  if (!fn->Get(context, NewString(isolate, "length")).ToLocal(&length)) return;
  v8::Local<v8::Function> wrapper;
  if (!v8::Function::New(context, CallOwningStrings, fn, length->IsInt32() ? length.As<v8::Int32>()->Value() : 0,
                         v8::ConstructorBehavior::kThrow)
           .ToLocal(&wrapper)) {
    return;
  }
  wrapper->SetName(info[1].As<v8::String>());
  info.GetReturnValue().Set(wrapper);
}

// ---- atob and btoa ----
// Native functions installed as the globals themselves, as workerd's are C++:
// the only allocation is the result, made with no JavaScript frame of the
// runtime's on the stack, so a profile charges it to the worker's caller. The
// Data is the prelude's error factory, (kind) -> the DOMException to throw.

void ThrowBase64Error(const v8::FunctionCallbackInfo<v8::Value>& info, const char* kind) {
  v8::Isolate* isolate = info.GetIsolate();
  v8::Local<v8::Value> arg = NewString(isolate, kind);
  v8::Local<v8::Value> error;
  if (!info.Data()
           .As<v8::Function>()
           ->Call(isolate->GetCurrentContext(), v8::Undefined(isolate), 1, &arg)
           .ToLocal(&error)) {
    return;  // the factory threw: that exception stands
  }
  isolate->ThrowException(error);
}

// The Latin-1 characters of `s`, or false when one is above U+00FF.
bool Latin1Chars(v8::Isolate* isolate, v8::Local<v8::String> s, std::string* out) {
  if (!s->ContainsOnlyOneByte()) return false;
  out->resize(static_cast<size_t>(s->Length()));
  s->WriteOneByte(isolate, reinterpret_cast<uint8_t*>(out->data()), 0, s->Length(), v8::String::NO_NULL_TERMINATION);
  return true;
}

constexpr char kBase64Alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// btoa(data): base64 of a string of Latin-1 characters.
void Btoa(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  v8::Local<v8::String> s;
  if (!info[0]->ToString(isolate->GetCurrentContext()).ToLocal(&s)) return;
  std::string bytes;
  if (!Latin1Chars(isolate, s, &bytes)) return ThrowBase64Error(info, "btoa");
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    const size_t n = std::min<size_t>(3, bytes.size() - i);
    uint32_t v = static_cast<uint32_t>(static_cast<uint8_t>(bytes[i])) << 16;
    if (n > 1) v |= static_cast<uint32_t>(static_cast<uint8_t>(bytes[i + 1])) << 8;
    if (n > 2) v |= static_cast<uint8_t>(bytes[i + 2]);
    out += kBase64Alphabet[(v >> 18) & 63];
    out += kBase64Alphabet[(v >> 12) & 63];
    out += n > 1 ? kBase64Alphabet[(v >> 6) & 63] : '=';
    out += n > 2 ? kBase64Alphabet[v & 63] : '=';
  }
  v8::Local<v8::String> result;
  if (!v8::String::NewFromOneByte(isolate, reinterpret_cast<const uint8_t*>(out.data()), v8::NewStringType::kNormal,
                                  static_cast<int>(out.size()))
           .ToLocal(&result)) {
    return;  // longer than V8's longest string: V8 has thrown
  }
  info.GetReturnValue().Set(result);
}

// atob(data): HTML's forgiving-base64 decode, to a string of Latin-1 characters.
void Atob(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  v8::Local<v8::String> s;
  if (!info[0]->ToString(isolate->GetCurrentContext()).ToLocal(&s)) return;
  std::string text;
  if (!Latin1Chars(isolate, s, &text)) return ThrowBase64Error(info, "atob");  // no such character is base64
  // ASCII whitespace goes; then, at a length divisible by 4, one or two final '='.
  text.erase(std::remove_if(text.begin(), text.end(),
                            [](char c) { return c == '\t' || c == '\n' || c == '\f' || c == '\r' || c == ' '; }),
             text.end());
  if (text.size() % 4 == 0 && !text.empty() && text.back() == '=') {
    text.pop_back();
    if (!text.empty() && text.back() == '=') text.pop_back();
  }
  if (text.size() % 4 == 1) return ThrowBase64Error(info, "atob");
  std::string out;
  out.reserve(text.size() / 4 * 3 + 2);
  uint32_t buffer = 0;
  int bits = 0;
  for (char c : text) {
    int v;
    if (c >= 'A' && c <= 'Z')
      v = c - 'A';
    else if (c >= 'a' && c <= 'z')
      v = c - 'a' + 26;
    else if (c >= '0' && c <= '9')
      v = c - '0' + 52;
    else if (c == '+')
      v = 62;
    else if (c == '/')
      v = 63;
    else
      return ThrowBase64Error(info, "atob");
    buffer = (buffer << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += static_cast<char>((buffer >> bits) & 0xff);
    }
  }
  v8::Local<v8::String> result;
  if (!v8::String::NewFromOneByte(isolate, reinterpret_cast<const uint8_t*>(out.data()), v8::NewStringType::kNormal,
                                  static_cast<int>(out.size()))
           .ToLocal(&result)) {
    return;
  }
  info.GetReturnValue().Set(result);
}

// base64Functions(errorFactory): [atob, btoa] as native functions.
void Base64Functions(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  v8::Local<v8::Context> context = isolate->GetCurrentContext();
  if (!info[0]->IsFunction()) {
    ThrowTypeError(isolate, "base64Functions(errorFactory) takes a function");
    return;
  }
  v8::Local<v8::Value> functions[2];
  const std::pair<const char*, v8::FunctionCallback> made[] = {{"atob", Atob}, {"btoa", Btoa}};
  for (size_t i = 0; i < 2; ++i) {
    v8::Local<v8::Function> f;
    if (!v8::Function::New(context, made[i].second, info[0], 1, v8::ConstructorBehavior::kThrow).ToLocal(&f)) return;
    f->SetName(NewString(isolate, made[i].first));
    functions[i] = f;
  }
  info.GetReturnValue().Set(v8::Array::New(isolate, functions, 2));
}

// The body of Response.json as made by jsonResponder: JSON text made by V8's
// own serializer with no frame of the runtime's on the stack (the text, the
// big allocation, is charged to the worker's caller, as workerd's C++ one
// is), then the Data, the prelude's finish(text, init), makes the Response.
// finish gets undefined when the value cannot be serialized (undefined, a
// function, a symbol: V8's Stringify answers "undefined" for those, which no
// serializable value gives).
void RespondJson(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  v8::Local<v8::Context> context = isolate->GetCurrentContext();
  v8::Local<v8::String> text;
  if (!v8::JSON::Stringify(context, info[0]).ToLocal(&text)) return;  // it threw (a cycle, a BigInt, toJSON)
  v8::Local<v8::Value> args[2] = {text, info[1]};
  if (text->Length() == 9 && text->StringEquals(NewString(isolate, "undefined"))) args[0] = v8::Undefined(isolate);
  v8::Local<v8::Value> response;
  if (!info.Data().As<v8::Function>()->Call(context, v8::Undefined(isolate), 2, args).ToLocal(&response)) return;
  info.GetReturnValue().Set(response);
}

// jsonResponder(finish): Response.json as a native function over finish.
void JsonResponder(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  if (!info[0]->IsFunction()) {
    ThrowTypeError(isolate, "jsonResponder(finish) takes a function");
    return;
  }
  v8::Local<v8::Function> f;
  if (!v8::Function::New(isolate->GetCurrentContext(), RespondJson, info[0], 1, v8::ConstructorBehavior::kThrow)
           .ToLocal(&f)) {
    return;
  }
  f->SetName(NewString(isolate, "json"));
  info.GetReturnValue().Set(f);
}

bool HasHeader(const WorkerRequest& request, std::string_view name) {
  for (const auto& header : request.headers) {
    if (header.first.size() == name.size() &&
        std::equal(name.begin(), name.end(), header.first.begin(),
                   [](char a, char b) { return a == std::tolower(static_cast<unsigned char>(b)); })) {
      return true;
    }
  }
  return false;
}

// "example.com:8787" of "https://example.com:8787/path?q".
std::string_view UrlHost(std::string_view url) {
  size_t start = url.find("://");
  start = start == std::string_view::npos ? 0 : start + 3;
  size_t end = url.find_first_of("/?#", start);
  return url.substr(start, end == std::string_view::npos ? std::string_view::npos : end - start);
}

// requestParts(): [method, url, [name, value, ...], body] of the request
// being dispatched (see WorkerRuntime::State::pending_request). Called from
// the prelude's makeRequest, so the profile charges these strings to it.
// Method and header names are internalized: they repeat across requests.
void RequestParts(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  const WorkerRequest* request = StateOf(info)->pending_request;
  if (request == nullptr) {
    ThrowTypeError(isolate, "no request is being dispatched");
    return;
  }
  auto internalized = [isolate](const std::string& s) -> v8::Local<v8::Value> {
    return v8::String::NewFromUtf8(isolate, s.data(), v8::NewStringType::kInternalized, static_cast<int>(s.size()))
        .ToLocalChecked();
  };
  std::vector<v8::Local<v8::Value>> headers;
  headers.reserve(request->headers.size() * 2 + 4);
  auto add = [&](const std::string& name, std::string_view value) {
    headers.push_back(internalized(name));
    headers.push_back(NewString(isolate, value));
  };
  for (const auto& [name, value] : request->headers) add(name, value);
  // What every request that arrives over HTTP carries (workerd hands both to
  // the worker): Host, and the length of a body.
  if (!HasHeader(*request, "host")) add("host", UrlHost(request->url));
  if (!request->body.empty() && !HasHeader(*request, "content-length") && !HasHeader(*request, "transfer-encoding")) {
    add("content-length", std::to_string(request->body.size()));
  }
  v8::Local<v8::Value> parts[] = {internalized(request->method), NewString(isolate, request->url),
                                  v8::Array::New(isolate, headers.data(), headers.size()),
                                  NewString(isolate, request->body)};
  info.GetReturnValue().Set(v8::Array::New(isolate, parts, 4));
}

}  // namespace

bool ViewBytes(v8::Local<v8::Value> value, std::string_view* out) {
  if (value->IsArrayBufferView()) {
    v8::Local<v8::ArrayBufferView> view = value.As<v8::ArrayBufferView>();
    const char* base = static_cast<const char*>(view->Buffer()->GetBackingStore()->Data());
    *out = std::string_view(base == nullptr ? "" : base + view->ByteOffset(), view->ByteLength());
    return true;
  }
  if (value->IsArrayBuffer()) {
    v8::Local<v8::ArrayBuffer> buffer = value.As<v8::ArrayBuffer>();
    const char* base = static_cast<const char*>(buffer->GetBackingStore()->Data());
    *out = std::string_view(base == nullptr ? "" : base, buffer->ByteLength());
    return true;
  }
  return false;
}

// htmlRewriterWasm() -> ArrayBuffer: a copy of lol-html's WebAssembly module
// for HTMLRewriter's first use in the isolate. A copy (not a view of the
// binary's read-only bytes) because JavaScript may write into an ArrayBuffer;
// WebAssembly.Module keeps its own, and this one is garbage after.
namespace {
void HtmlRewriterWasm(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  const size_t size = static_cast<size_t>(heapprof_html_rewriter_wasm_end - heapprof_html_rewriter_wasm);
  v8::Local<v8::ArrayBuffer> buffer = v8::ArrayBuffer::New(isolate, size);
  std::memcpy(buffer->GetBackingStore()->Data(), heapprof_html_rewriter_wasm, size);
  info.GetReturnValue().Set(buffer);
}

// htmlRewriterEngine() -> load(host): runs HTMLRewriter's engine script,
// compiled only now so that a worker without HTMLRewriter holds neither its
// source nor its code. Its errors propagate as JavaScript exceptions.
void HtmlRewriterEngine(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  v8::Local<v8::Context> context = isolate->GetCurrentContext();
  v8::ScriptOrigin origin(isolate, NewString(isolate, kWorkerHtmlRewriterName));
  v8::Local<v8::Script> script;
  v8::Local<v8::Value> load;
  if (v8::Script::Compile(context, RuntimeScriptSource(isolate, kWorkerHtmlRewriterSource), &origin).ToLocal(&script) &&
      script->Run(context).ToLocal(&load)) {
    info.GetReturnValue().Set(load);
  }
}

// nodeLibraries() -> load(host): runs the node: modules' script
// (heapprof/runtime/js/node.js), compiled only at the worker's first import of a
// node: module.
void NodeLibraries(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  v8::Local<v8::Context> context = isolate->GetCurrentContext();
  v8::ScriptOrigin origin(isolate, NewString(isolate, kWorkerNodeName));
  v8::Local<v8::Script> script;
  v8::Local<v8::Value> load;
  if (v8::Script::Compile(context, RuntimeScriptSource(isolate, kWorkerNodeSource), &origin).ToLocal(&script) &&
      script->Run(context).ToLocal(&load)) {
    info.GetReturnValue().Set(load);
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

// lazyGlobal(name, make): a data property of the global object whose value
// is make()'s, called at the property's first read (V8's lazy data
// property): nodejs_compat's Buffer and process load the node: modules only
// when a worker uses them, and still read as plain data properties.
void LazyGlobalGetter(v8::Local<v8::Name> /*name*/, const v8::PropertyCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  v8::Local<v8::Context> context = isolate->GetCurrentContext();
  v8::Local<v8::Value> value;
  if (info.Data().As<v8::Function>()->Call(context, v8::Undefined(isolate), 0, nullptr).ToLocal(&value)) {
    info.GetReturnValue().Set(value);
  }
}
void LazyGlobal(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  v8::Local<v8::Context> context = isolate->GetCurrentContext();
  if (!info[0]->IsString() || !info[1]->IsFunction()) {
    ThrowTypeError(isolate, "lazyGlobal(name, make)");
    return;
  }
  v8::Maybe<bool> set = context->Global()->SetLazyDataProperty(context, info[0].As<v8::String>(), LazyGlobalGetter,
                                                               info[1], v8::DontEnum);
  if (set.IsNothing()) return;
}

}  // namespace

v8::MaybeLocal<v8::Object> MakeWorkerNatives(v8::Local<v8::Context> context, void* state) {
  v8::Isolate* isolate = context->GetIsolate();
  v8::Local<v8::External> data = v8::External::New(isolate, state);
  v8::Local<v8::Object> natives = v8::Object::New(isolate);
  struct Entry {
    const char* name;
    v8::FunctionCallback callback;
  };
  const Entry entries[] = {
      {"consoleWrite", ConsoleWrite},
      {"requestParts", RequestParts},
      {"ownStrings", OwnStrings},
      {"base64Functions", Base64Functions},
      {"jsonResponder", JsonResponder},
      {"utf8Encode", Utf8Encode},
      {"utf8Decode", Utf8Decode},
      {"structuredClone", StructuredClone},
      {"randomFill", CryptoRandomFill},
      {"digest", CryptoDigest},
      {"hmac", CryptoHmac},
      {"timingSafeEqual", CryptoTimingSafeEqual},
      {"zlibOpen", ZlibOpen},
      {"zlibRun", ZlibRun},
      {"zlibClose", ZlibClose},
      {"keyInfo", CryptoKeyInfo},
      {"keyFromJwk", CryptoKeyFromJwk},
      {"keyToDer", CryptoKeyToDer},
      {"keyToJwk", CryptoKeyToJwk},
      {"ecFromRaw", CryptoEcFromRaw},
      {"ecToRaw", CryptoEcToRaw},
      {"generateKeyPair", CryptoGenerateKeyPair},
      {"sign", CryptoSign},
      {"verify", CryptoVerify},
      {"rsaOaep", CryptoRsaOaep},
      {"aes", CryptoAes},
      {"pbkdf2", CryptoPbkdf2},
      {"hkdf", CryptoHkdf},
      {"ecdh", CryptoEcdh},
      {"htmlRewriterWasm", HtmlRewriterWasm},
      {"htmlRewriterEngine", HtmlRewriterEngine},
      {"nodeLibraries", NodeLibraries},
      {"getAsyncFrame", GetAsyncFrame},
      {"setAsyncFrame", SetAsyncFrame},
      {"lazyGlobal", LazyGlobal},
      {"lazyProperty", LazyProperty},
      {"objectCall", ObjectCall},
      {"objectStorage", ObjectStorage},
      {"serialize", Serialize},
      {"deserialize", Deserialize},
  };
  for (const Entry& entry : entries) {
    v8::Local<v8::Function> function;
    if (!v8::Function::New(context, entry.callback, data).ToLocal(&function) ||
        natives->Set(context, NewString(isolate, entry.name), function).IsNothing()) {
      return {};
    }
  }
  return natives;
}

// The bytes of a body value the prelude handed back: a string (UTF-8) or a Uint8Array.
std::string BodyBytes(v8::Isolate* isolate, v8::Local<v8::Value> body) {
  if (body->IsString()) return ToStdString(isolate, body.As<v8::String>());
  if (body->IsArrayBufferView()) {
    v8::Local<v8::ArrayBufferView> view = body.As<v8::ArrayBufferView>();
    std::string out(view->ByteLength(), '\0');
    view->CopyContents(out.data(), out.size());
    return out;
  }
  return {};
}

}  // namespace heapprof::internal
