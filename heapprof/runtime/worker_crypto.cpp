// OpenSSL behind the worker runtime's Web Crypto: random bytes, digests,
// HMAC and the key derivations (PBKDF2, HKDF). Bad arguments throw a
// TypeError (or an Error named as a DOMException: NotSupportedError,
// DataError, OperationError); the prelude checks shapes first, so these are
// the last line. The other natives are in worker_crypto_keys.cpp (import,
// export, generation), worker_crypto_asymmetric.cpp (sign, verify, RSA-OAEP,
// ECDH) and worker_crypto_aes.cpp.
#include "heapprof/runtime/worker_crypto.h"

#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <string>
#include <string_view>
#include <vector>

#include "heapprof/runtime/worker_crypto_util.h"
#include "heapprof/runtime/worker_natives.h"
#include "heapprof/v8/v8_util.h"

namespace heapprof::internal {

using namespace crypto;  // the helpers every crypto native uses

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
  if (HMAC(md, key_data, static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(data.data()), data.size(),
           out, &length) == nullptr) {
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

void CryptoPbkdf2(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  const EVP_MD* md = HashArgument(info, 0);
  std::string_view password;
  std::string_view salt;
  if (md == nullptr || !BytesArgument(info, 1, &password) || !BytesArgument(info, 2, &salt)) return;
  auto iterations = CountArgument(info, 3);
  auto bytes = static_cast<size_t>(CountArgument(info, 4));
  std::vector<unsigned char> out(bytes);
  static const char kEmpty = 0;
  if (bytes > 0 &&
      PKCS5_PBKDF2_HMAC(password.empty() ? &kEmpty : password.data(), static_cast<int>(password.size()),
                        salt.empty() ? Bytes(std::string_view(&kEmpty, 0)) : Bytes(salt), static_cast<int>(salt.size()),
                        iterations, md, static_cast<int>(bytes), out.data()) != 1) {
    Throw(isolate, "OperationError", "PBKDF2 deriveBits failed.");
    return;
  }
  info.GetReturnValue().Set(NewBuffer(isolate, out.data(), out.size()));
}

void CryptoHkdf(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  std::string hash = StringArgument(info, 0);
  std::string_view key;
  std::string_view salt;
  std::string_view extra;
  if (HashArgument(info, 0) == nullptr || !BytesArgument(info, 1, &key) || !BytesArgument(info, 2, &salt) ||
      !BytesArgument(info, 3, &extra)) {
    return;
  }
  auto bytes = static_cast<size_t>(CountArgument(info, 4));
  std::vector<unsigned char> out(bytes);
  if (bytes == 0) {
    info.GetReturnValue().Set(NewBuffer(isolate, out.data(), 0));
    return;
  }
  KdfPtr kdf(EVP_KDF_fetch(nullptr, "HKDF", nullptr));
  KdfCtxPtr ctx(kdf == nullptr ? nullptr : EVP_KDF_CTX_new(kdf.get()));
  // OpenSSL's parameters want mutable pointers it only reads; an empty member still needs one.
  std::string key_copy(key), salt_copy(salt), info_copy(extra);
  OSSL_PARAM params[] = {
      OSSL_PARAM_construct_utf8_string(OSSL_KDF_PARAM_DIGEST, hash.data(), 0),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_KEY, key_copy.data(), key_copy.size()),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_SALT, salt_copy.data(), salt_copy.size()),
      OSSL_PARAM_construct_octet_string(OSSL_KDF_PARAM_INFO, info_copy.data(), info_copy.size()),
      OSSL_PARAM_construct_end(),
  };
  if (ctx == nullptr || EVP_KDF_derive(ctx.get(), out.data(), out.size(), params) != 1) {
    Throw(isolate, "OperationError", "HKDF deriveBits failed.");
    return;
  }
  info.GetReturnValue().Set(NewBuffer(isolate, out.data(), out.size()));
}

}  // namespace heapprof::internal
