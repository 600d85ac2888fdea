// Native functions behind the worker globals: the table handed to the
// prelude (the natives of each group in their files: worker_text_natives,
// worker_lazy_natives, worker_crypto, worker_compression, lazy_runtime,
// durable_object_host), console output, and the request being dispatched.
#include "heapprof/runtime/worker_natives.h"

#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>
#include <vector>

#include "heapprof/runtime/durable_object_host.h"
#include "heapprof/runtime/lazy_runtime.h"
#include "heapprof/runtime/native_callbacks.h"
#include "heapprof/runtime/worker_compression.h"
#include "heapprof/runtime/worker_crypto.h"
#include "heapprof/runtime/worker_state.h"
#include "heapprof/v8/v8_util.h"

namespace heapprof::internal {
namespace {

// console.* from JS: (level, text) -> the sink.
void ConsoleWrite(const v8::FunctionCallbackInfo<v8::Value>& info) {
  WorkerRuntime::State* state = StateOf(info);
  v8::Isolate* isolate = info.GetIsolate();
  v8::Local<v8::Context> context = isolate->GetCurrentContext();
  std::string level = ValueToString(isolate, context, info[0]);
  std::string text = ValueToString(isolate, context, info[1]);
  if (state->console) state->console(level, text);
}

// setInternals(object): the prelude's last statement hands the host its
// internals (WorkerRuntime::State::internals), once.
void SetInternals(const v8::FunctionCallbackInfo<v8::Value>& info) {
  WorkerRuntime::State* state = StateOf(info);
  if (!info[0]->IsObject() || !state->internals.IsEmpty()) {
    ThrowTypeError(info.GetIsolate(), "setInternals(object), once");
    return;
  }
  state->internals.Reset(info.GetIsolate(), info[0].As<v8::Object>());
}

// respond(status, statusText, [name, value, ...], body): what a handler
// returned, handed over by the prelude's readResponse() while the host reads
// it (WorkerRuntime::State::response_out): no array of the parts is made.
void Respond(const v8::FunctionCallbackInfo<v8::Value>& info) {
  WorkerRuntime::State* state = StateOf(info);
  v8::Isolate* isolate = info.GetIsolate();
  if (state->response_out == nullptr || !info[2]->IsArray()) {
    ThrowTypeError(isolate, "respond(status, statusText, headers, body): no response is being read");
    return;
  }
  v8::Local<v8::Context> context = isolate->GetCurrentContext();
  WorkerResponse& out = *state->response_out;
  if (info[0]->IsInt32()) out.status = info[0].As<v8::Int32>()->Value();
  out.reason = ValueToString(isolate, context, info[1]);
  v8::Local<v8::Array> headers = info[2].As<v8::Array>();
  out.headers.clear();
  for (uint32_t i = 0; i + 1 < headers->Length(); i += 2) {
    v8::Local<v8::Value> name, value;
    if (!headers->Get(context, i).ToLocal(&name) || !headers->Get(context, i + 1).ToLocal(&value)) return;
    out.headers.emplace_back(ValueToString(isolate, context, name), ValueToString(isolate, context, value));
  }
  out.body = BodyBytes(isolate, info[3]);
  state->responded = true;
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

// requestParts(init) -> [name, value, ...]: the header list of the request
// being dispatched (see WorkerRuntime::State::pending_request); its method,
// url and body (null when empty) go into init's fields of those names, so no
// array of the parts is made. Called from the prelude's makeRequest, so the
// profile charges these strings to it. Method and header names are
// internalized: they repeat across requests.
void RequestParts(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  const WorkerRequest* request = StateOf(info)->pending_request;
  if (request == nullptr || !info[0]->IsObject()) {
    ThrowTypeError(isolate, "requestParts(init): no request is being dispatched");
    return;
  }
  auto internalized = [isolate](const std::string& s) -> v8::Local<v8::String> {
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
  v8::Local<v8::Context> context = isolate->GetCurrentContext();
  v8::Local<v8::Object> init = info[0].As<v8::Object>();
  v8::Local<v8::Value> body = v8::Null(isolate);
  if (!request->body.empty()) body = NewString(isolate, request->body);
  if (init->Set(context, internalized("method"), internalized(request->method)).IsNothing() ||
      init->Set(context, internalized("url"), NewString(isolate, request->url)).IsNothing() ||
      init->Set(context, internalized("body"), body).IsNothing()) {
    return;
  }
  info.GetReturnValue().Set(v8::Array::New(isolate, headers.data(), headers.size()));
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

namespace {

struct Entry {
  const char* name;
  v8::FunctionCallback callback;
  bool kept = true;  // false: read once, at startup, and not kept after
};
constexpr Entry kEntries[] = {
    {"consoleWrite", ConsoleWrite},
    {"setInternals", SetInternals, false},
    {"requestParts", RequestParts},
    {"respond", Respond},
    {"isNormalHref", IsNormalHref},
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
    {"webApis", WebApis},
    {"getAsyncFrame", GetAsyncFrame},
    {"setAsyncFrame", SetAsyncFrame},
    {"lazyGlobals", AddLazyGlobals, false},
    {"lazyProperty", LazyProperty},
    {"objectCall", ObjectCall},
    {"objectStorage", ObjectStorage},
    {"serialize", Serialize},
    {"deserialize", Deserialize},
};

// A native is made at each of its first two reads, then kept: each costs a
// function, its template and call handler on the heap, and a worker without
// crypto, compression or Durable Objects never reads most of them. One
// interceptor makes them all: a lazy data property a native would cost its
// own accessor info, three foreign pointers and a dictionary entry besides.
// The natives read again are kept in the natives object's internal field,
// an object in dictionary mode (fast properties would keep a map for each
// one added). Those the prelude reads once, at startup, into its own
// bindings (host.js) are not kept twice, nor those only the installer
// calls. The data is the state's External, shared by all.
void GetNative(v8::Local<v8::Name> name, const v8::PropertyCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  v8::Local<v8::Context> context = isolate->GetCurrentContext();
  v8::Local<v8::Object> made = info.Holder()->GetInternalField(0).As<v8::Object>();
  v8::Local<v8::Value> known;
  if (made->GetRealNamedProperty(context, name).ToLocal(&known)) {
    info.GetReturnValue().Set(known);
    return;
  }
  const std::string key = ToStdString(isolate, name.As<v8::String>());
  for (size_t i = 0; i < std::size(kEntries); ++i) {
    const Entry& entry = kEntries[i];
    if (key != entry.name) continue;
    std::vector<bool>& read = static_cast<WorkerRuntime::State*>(info.Data().As<v8::External>()->Value())->natives_read;
    if (read.size() < std::size(kEntries)) read.resize(std::size(kEntries));
    const bool keep = entry.kept && read[i];
    read[i] = true;
    v8::Local<v8::Function> function;
    if (v8::Function::New(context, entry.callback, info.Data()).ToLocal(&function) &&
        (!keep || made->CreateDataProperty(context, name, function).IsJust())) {
      info.GetReturnValue().Set(function);
    }
    return;
  }
  // Not a native: the read goes on to the object, which has no properties.
}

}  // namespace

v8::MaybeLocal<v8::Object> MakeWorkerNatives(v8::Local<v8::Context> context, void* state) {
  v8::Isolate* isolate = context->GetIsolate();
  v8::Local<v8::ObjectTemplate> shape = v8::ObjectTemplate::New(isolate);
  shape->SetInternalFieldCount(1);
  shape->SetHandler(v8::NamedPropertyHandlerConfiguration(GetNative, nullptr, nullptr, nullptr, nullptr,
                                                          v8::External::New(isolate, state),
                                                          v8::PropertyHandlerFlags::kOnlyInterceptStrings));
  v8::Local<v8::Object> natives;
  if (!shape->NewInstance(context).ToLocal(&natives) || natives->SetPrototype(context, v8::Null(isolate)).IsNothing()) {
    return {};
  }
  natives->SetInternalField(0, v8::Object::New(isolate, v8::Null(isolate), nullptr, nullptr, 0));
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
