// OpenSSL behind the worker runtime's Web Crypto. Bad arguments throw a
// TypeError (or a NotSupportedError-named Error for unknown algorithms); the
// prelude checks shapes first, so these are the last line.
#include "heapprof/v8/worker_crypto.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <cstring>
#include <string>
#include <string_view>

#include "heapprof/v8/v8_util.h"
#include "heapprof/v8/worker_natives.h"

namespace heapprof::internal {
namespace {

void Throw(v8::Isolate* isolate, std::string_view name, const std::string& message) {
  v8::Local<v8::Value> error = v8::Exception::TypeError(NewString(isolate, message));
  if (name != "TypeError") {
    error = v8::Exception::Error(NewString(isolate, message));
    v8::Local<v8::Context> context = isolate->GetCurrentContext();
    if (error.As<v8::Object>()->Set(context, NewString(isolate, "name"), NewString(isolate, name)).IsNothing()) return;
  }
  isolate->ThrowException(error);
}

const EVP_MD* DigestByName(const std::string& name) {
  if (name == "SHA-1") return EVP_sha1();
  if (name == "SHA-256") return EVP_sha256();
  if (name == "SHA-384") return EVP_sha384();
  if (name == "SHA-512") return EVP_sha512();
  if (name == "MD5") return EVP_md5();
  return nullptr;
}

v8::Local<v8::ArrayBuffer> NewBuffer(v8::Isolate* isolate, const unsigned char* data, size_t size) {
  v8::Local<v8::ArrayBuffer> buffer = v8::ArrayBuffer::New(isolate, size);
  if (size > 0) std::memcpy(buffer->GetBackingStore()->Data(), data, size);
  return buffer;
}

// The hash named by info[index], or nullptr after throwing.
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

}  // namespace

void CryptoRandomFill(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  if (!info[0]->IsArrayBufferView()) {
    Throw(isolate, "TypeError", "getRandomValues() needs an integer typed array");
    return;
  }
  v8::Local<v8::ArrayBufferView> view = info[0].As<v8::ArrayBufferView>();
  auto* data = static_cast<unsigned char*>(view->Buffer()->GetBackingStore()->Data()) + view->ByteOffset();
  if (view->ByteLength() > 0 && RAND_bytes(data, static_cast<int>(view->ByteLength())) != 1) {
    Throw(isolate, "OperationError", "OpenSSL could not produce random bytes");
    return;
  }
  info.GetReturnValue().Set(view);
}

void CryptoDigest(const v8::FunctionCallbackInfo<v8::Value>& info) {
  const EVP_MD* md = HashArgument(info, 0);
  std::string_view data;
  if (md == nullptr || !BytesArgument(info, 1, &data)) return;
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_Digest(data.data(), data.size(), out, &length, md, nullptr) != 1) {
    Throw(info.GetIsolate(), "OperationError", "OpenSSL's digest failed");
    return;
  }
  info.GetReturnValue().Set(NewBuffer(info.GetIsolate(), out, length));
}

void CryptoHmac(const v8::FunctionCallbackInfo<v8::Value>& info) {
  const EVP_MD* md = HashArgument(info, 0);
  std::string_view key;
  std::string_view data;
  if (md == nullptr || !BytesArgument(info, 1, &key) || !BytesArgument(info, 2, &data)) return;
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  // OpenSSL wants a non-null key pointer even for an empty key.
  static const unsigned char kEmpty = 0;
  const void* key_data = key.empty() ? static_cast<const void*>(&kEmpty) : static_cast<const void*>(key.data());
  if (HMAC(md, key_data, static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(data.data()),
           data.size(), out, &length) == nullptr) {
    Throw(info.GetIsolate(), "OperationError", "OpenSSL's HMAC failed");
    return;
  }
  info.GetReturnValue().Set(NewBuffer(info.GetIsolate(), out, length));
}

void CryptoTimingSafeEqual(const v8::FunctionCallbackInfo<v8::Value>& info) {
  std::string_view a;
  std::string_view b;
  if (!BytesArgument(info, 0, &a) || !BytesArgument(info, 1, &b)) return;
  bool equal = a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
  info.GetReturnValue().Set(equal);
}

}  // namespace heapprof::internal
