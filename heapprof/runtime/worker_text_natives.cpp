// The natives of text and values made by V8 with no frame of the runtime's
// on the stack: UTF-8 through V8's own conversion (TextEncoder, TextDecoder,
// byte bodies), atob and btoa, strings of their own (ownStrings), JSON for
// Response.json and structuredClone through V8's serializers.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "heapprof/core/text.h"
#include "heapprof/runtime/native_callbacks.h"
#include "heapprof/runtime/worker_natives.h"
#include "heapprof/v8/v8_util.h"

namespace heapprof::internal {
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

namespace {

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
}  // namespace

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

namespace {

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
  Result<std::string> decoded = internal::Base64Decode(text, internal::Base64Mode::kStrict);
  if (!decoded.ok()) return ThrowBase64Error(info, "atob");
  const std::string& out = decoded.value();
  v8::Local<v8::String> result;
  if (!v8::String::NewFromOneByte(isolate, reinterpret_cast<const uint8_t*>(out.data()), v8::NewStringType::kNormal,
                                  static_cast<int>(out.size()))
           .ToLocal(&result)) {
    return;
  }
  info.GetReturnValue().Set(result);
}
}  // namespace

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

namespace {

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
}  // namespace

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

}  // namespace heapprof::internal
