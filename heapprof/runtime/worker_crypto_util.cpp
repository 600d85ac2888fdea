// The Web Crypto natives' shared helpers (worker_crypto_util.h).
#include "heapprof/runtime/worker_crypto_util.h"

#include <openssl/err.h>

#include <cstring>
#include <limits>

#include "heapprof/runtime/worker_natives.h"
#include "heapprof/v8/v8_util.h"

namespace heapprof::internal::crypto {

void Throw(v8::Isolate* isolate, std::string_view name, const std::string& message) {
  // What OpenSSL queued about the failure is not wanted by the next call.
  ERR_clear_error();
  v8::Local<v8::Value> error = v8::Exception::TypeError(NewString(isolate, message));
  if (name != "TypeError") {
    error = v8::Exception::Error(NewString(isolate, message));
    v8::Local<v8::Context> context = isolate->GetCurrentContext();
    if (error.As<v8::Object>()->Set(context, NewString(isolate, "name"), NewString(isolate, name)).IsNothing()) return;
  }
  isolate->ThrowException(error);
}

namespace {

const EVP_MD* DigestByName(const std::string& name) {
  if (name == "SHA-1") return EVP_sha1();
  if (name == "SHA-256") return EVP_sha256();
  if (name == "SHA-384") return EVP_sha384();
  if (name == "SHA-512") return EVP_sha512();
  if (name == "MD5") return EVP_md5();
  return nullptr;
}

}  // namespace

v8::Local<v8::ArrayBuffer> NewBuffer(v8::Isolate* isolate, const unsigned char* data, size_t size) {
  v8::Local<v8::ArrayBuffer> buffer = v8::ArrayBuffer::New(isolate, size);
  if (size > 0) std::memcpy(buffer->GetBackingStore()->Data(), data, size);
  return buffer;
}

const EVP_MD* HashArgument(const v8::FunctionCallbackInfo<v8::Value>& info, int index) {
  v8::Isolate* isolate = info.GetIsolate();
  std::string name = ValueToString(isolate, isolate->GetCurrentContext(), info[index]);
  const EVP_MD* md = DigestByName(name);
  if (md == nullptr) Throw(isolate, "NotSupportedError", "unrecognized or unsupported hash algorithm: " + name);
  return md;
}

bool BytesArgument(const v8::FunctionCallbackInfo<v8::Value>& info, int index, std::string_view* out) {
  if (ViewBytes(info[index], out)) return true;
  Throw(info.GetIsolate(), "TypeError", "expected an ArrayBuffer or an ArrayBufferView");
  return false;
}

std::string StringArgument(const v8::FunctionCallbackInfo<v8::Value>& info, int index) {
  v8::Isolate* isolate = info.GetIsolate();
  return ValueToString(isolate, isolate->GetCurrentContext(), info[index]);
}

int CountArgument(const v8::FunctionCallbackInfo<v8::Value>& info, int index) {
  double value = info[index]->NumberValue(info.GetIsolate()->GetCurrentContext()).FromMaybe(0);
  if (!(value > 0)) return 0;
  if (value >= static_cast<double>(std::numeric_limits<int>::max())) return std::numeric_limits<int>::max();
  return static_cast<int>(value);
}

v8::Local<v8::ArrayBuffer> WrapKey(v8::Isolate* isolate, PkeyPtr key) {
  auto* handle = new KeyHandle{KeyHandle::kMagic, std::move(key)};
  std::unique_ptr<v8::BackingStore> store = v8::ArrayBuffer::NewBackingStore(
      handle, sizeof(KeyHandle), [](void*, size_t, void* data) { delete static_cast<KeyHandle*>(data); }, handle);
  return v8::ArrayBuffer::New(isolate, std::move(store));
}

EVP_PKEY* KeyArgument(const v8::FunctionCallbackInfo<v8::Value>& info, int index) {
  if (info[index]->IsArrayBuffer()) {
    v8::Local<v8::ArrayBuffer> buffer = info[index].As<v8::ArrayBuffer>();
    auto* handle = static_cast<KeyHandle*>(buffer->GetBackingStore()->Data());
    if (buffer->ByteLength() == sizeof(KeyHandle) && handle != nullptr && handle->magic == KeyHandle::kMagic) {
      return handle->key.get();
    }
  }
  Throw(info.GetIsolate(), "TypeError", "expected a key handle");
  return nullptr;
}

}  // namespace heapprof::internal::crypto
