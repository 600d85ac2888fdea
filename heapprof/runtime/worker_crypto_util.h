// What the Web Crypto natives (worker_crypto*.cpp) share: errors thrown as
// the prelude expects them, argument readers, OpenSSL objects in unique_ptrs
// with their own free functions, and key handles (an ArrayBuffer owning an
// EVP_PKEY).
#pragma once

#include <v8.h>

#include <openssl/bn.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/kdf.h>
#include <openssl/param_build.h>
#include <openssl/x509.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace heapprof::internal::crypto {

// Throws a TypeError, or an Error whose name is `name` (a DOMException's),
// clearing what OpenSSL queued about the failure.
void Throw(v8::Isolate* isolate, std::string_view name, const std::string& message);

v8::Local<v8::ArrayBuffer> NewBuffer(v8::Isolate* isolate, const unsigned char* data, size_t size);

// The hash named by info[index], or nullptr after throwing.
const EVP_MD* HashArgument(const v8::FunctionCallbackInfo<v8::Value>& info, int index);
// The bytes of an ArrayBuffer(View) in info[index], or false after throwing.
bool BytesArgument(const v8::FunctionCallbackInfo<v8::Value>& info, int index, std::string_view* out);
std::string StringArgument(const v8::FunctionCallbackInfo<v8::Value>& info, int index);
// info[index] as an int in [0, INT_MAX]: NaN and negatives are 0, larger numbers INT_MAX
// (the prelude checks ranges first; converting such doubles unclamped would be undefined).
int CountArgument(const v8::FunctionCallbackInfo<v8::Value>& info, int index);

template <auto Free>
struct Deleter {
  template <typename T>
  void operator()(T* p) const {
    Free(p);
  }
};
using PkeyPtr = std::unique_ptr<EVP_PKEY, Deleter<EVP_PKEY_free>>;
using PkeyCtxPtr = std::unique_ptr<EVP_PKEY_CTX, Deleter<EVP_PKEY_CTX_free>>;
using MdCtxPtr = std::unique_ptr<EVP_MD_CTX, Deleter<EVP_MD_CTX_free>>;
using CipherCtxPtr = std::unique_ptr<EVP_CIPHER_CTX, Deleter<EVP_CIPHER_CTX_free>>;
using BignumPtr = std::unique_ptr<BIGNUM, Deleter<BN_clear_free>>;
using ParamBldPtr = std::unique_ptr<OSSL_PARAM_BLD, Deleter<OSSL_PARAM_BLD_free>>;
using ParamsPtr = std::unique_ptr<OSSL_PARAM, Deleter<OSSL_PARAM_free>>;
using Pkcs8Ptr = std::unique_ptr<PKCS8_PRIV_KEY_INFO, Deleter<PKCS8_PRIV_KEY_INFO_free>>;
using EcdsaSigPtr = std::unique_ptr<ECDSA_SIG, Deleter<ECDSA_SIG_free>>;
using KdfPtr = std::unique_ptr<EVP_KDF, Deleter<EVP_KDF_free>>;
using KdfCtxPtr = std::unique_ptr<EVP_KDF_CTX, Deleter<EVP_KDF_CTX_free>>;
inline void FreeBytes(unsigned char* p) { OPENSSL_free(p); }
using OpensslBytes = std::unique_ptr<unsigned char, Deleter<FreeBytes>>;

inline const auto* Bytes(std::string_view s) { return reinterpret_cast<const unsigned char*>(s.data()); }

inline int FieldBytes(const EVP_PKEY* key) { return (EVP_PKEY_get_bits(key) + 7) / 8; }

// A parsed key as the prelude holds it: an ArrayBuffer whose backing store
// owns the EVP_PKEY, so V8 frees the key when the last CryptoKey holding the
// buffer is collected, or when the isolate is disposed. The prelude never
// reads the buffer's bytes; `magic` lets a native tell a handle from any
// other buffer.
struct KeyHandle {
  static constexpr uint64_t kMagic = 0x6b65792d68616e64;  // "key-hand"
  uint64_t magic = kMagic;
  PkeyPtr key;
};

v8::Local<v8::ArrayBuffer> WrapKey(v8::Isolate* isolate, PkeyPtr key);
// The key of the handle in info[index], or nullptr after throwing.
EVP_PKEY* KeyArgument(const v8::FunctionCallbackInfo<v8::Value>& info, int index);

}  // namespace heapprof::internal::crypto
