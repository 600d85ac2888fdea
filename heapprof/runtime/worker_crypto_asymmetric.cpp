// Web Crypto's asymmetric operations in OpenSSL: RSASSA-PKCS1-v1_5, RSA-PSS
// and ECDSA signatures, RSA-OAEP, and ECDH.
#include "heapprof/runtime/worker_crypto.h"

#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/rsa.h>

#include <string>
#include <string_view>
#include <vector>

#include "heapprof/runtime/worker_crypto_util.h"
#include "heapprof/runtime/worker_natives.h"
#include "heapprof/v8/v8_util.h"

namespace heapprof::internal {

using namespace crypto;  // the helpers every crypto native uses

namespace {

// Sets RSA-PSS padding on a signing or verifying context.
bool SetPss(EVP_PKEY_CTX* ctx, const EVP_MD* md, int salt_length) {
  return EVP_PKEY_CTX_set_rsa_padding(ctx, RSA_PKCS1_PSS_PADDING) == 1 &&
         EVP_PKEY_CTX_set_rsa_pss_saltlen(ctx, salt_length) == 1 && EVP_PKEY_CTX_set_rsa_mgf1_md(ctx, md) == 1;
}

}  // namespace

void CryptoSign(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  std::string scheme = StringArgument(info, 0);
  std::string_view data;
  const EVP_MD* md = HashArgument(info, 2);
  EVP_PKEY* key = md == nullptr ? nullptr : KeyArgument(info, 1);
  if (key == nullptr || !BytesArgument(info, 4, &data)) return;
  MdCtxPtr mctx(EVP_MD_CTX_new());
  EVP_PKEY_CTX* pctx = nullptr;  // owned by mctx
  size_t length = 0;
  bool ok = mctx != nullptr && EVP_DigestSignInit(mctx.get(), &pctx, md, nullptr, key) == 1 &&
            (scheme != "pss" || SetPss(pctx, md, CountArgument(info, 3))) &&
            EVP_DigestSign(mctx.get(), nullptr, &length, Bytes(data), data.size()) == 1;
  std::vector<unsigned char> signature(length);
  ok = ok && EVP_DigestSign(mctx.get(), signature.data(), &length, Bytes(data), data.size()) == 1;
  if (!ok) {
    Throw(isolate, "OperationError", "OpenSSL could not sign with the key");
    return;
  }
  signature.resize(length);
  if (scheme == "ecdsa") {
    // DER's SEQUENCE { r, s } becomes Web Crypto's fixed-width r || s.
    const unsigned char* p = signature.data();
    EcdsaSigPtr sig(d2i_ECDSA_SIG(nullptr, &p, static_cast<long>(signature.size())));
    if (sig == nullptr) {
      Throw(isolate, "OperationError", "OpenSSL gave an unreadable ECDSA signature");
      return;
    }
    int size = FieldBytes(key);
    std::vector<unsigned char> raw(2 * size);
    BN_bn2binpad(ECDSA_SIG_get0_r(sig.get()), raw.data(), size);
    BN_bn2binpad(ECDSA_SIG_get0_s(sig.get()), raw.data() + size, size);
    signature = std::move(raw);
  }
  info.GetReturnValue().Set(NewBuffer(isolate, signature.data(), signature.size()));
}

void CryptoVerify(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  std::string scheme = StringArgument(info, 0);
  std::string_view signature;
  std::string_view data;
  const EVP_MD* md = HashArgument(info, 2);
  EVP_PKEY* key = md == nullptr ? nullptr : KeyArgument(info, 1);
  if (key == nullptr || !BytesArgument(info, 4, &signature) || !BytesArgument(info, 5, &data)) return;
  std::string der_signature(signature);
  if (scheme == "ecdsa") {
    // Web Crypto's r || s must be exactly twice the field's width; anything else does not verify.
    size_t size = FieldBytes(key);
    if (signature.size() != 2 * size) {
      info.GetReturnValue().Set(false);
      return;
    }
    EcdsaSigPtr sig(ECDSA_SIG_new());
    BIGNUM* r = BN_bin2bn(Bytes(signature), static_cast<int>(size), nullptr);
    BIGNUM* s = BN_bin2bn(Bytes(signature) + size, static_cast<int>(size), nullptr);
    if (sig == nullptr || r == nullptr || s == nullptr || ECDSA_SIG_set0(sig.get(), r, s) != 1) {
      BN_free(r);
      BN_free(s);
      Throw(isolate, "OperationError", "OpenSSL could not hold the ECDSA signature");
      return;
    }
    unsigned char* encoded = nullptr;
    int length = i2d_ECDSA_SIG(sig.get(), &encoded);
    OpensslBytes owned(encoded);
    if (length <= 0) {
      Throw(isolate, "OperationError", "OpenSSL could not encode the ECDSA signature");
      return;
    }
    der_signature.assign(reinterpret_cast<const char*>(encoded), length);
  }
  MdCtxPtr mctx(EVP_MD_CTX_new());
  EVP_PKEY_CTX* pctx = nullptr;  // owned by mctx
  if (mctx == nullptr || EVP_DigestVerifyInit(mctx.get(), &pctx, md, nullptr, key) != 1 ||
      (scheme == "pss" && !SetPss(pctx, md, CountArgument(info, 3)))) {
    Throw(isolate, "OperationError", "OpenSSL could not verify with the key");
    return;
  }
  // 1 is a good signature; 0 or an error (a signature of the wrong size) is a bad one.
  bool good = EVP_DigestVerify(mctx.get(), Bytes(der_signature), der_signature.size(), Bytes(data), data.size()) == 1;
  ERR_clear_error();
  info.GetReturnValue().Set(good);
}

void CryptoRsaOaep(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  bool encrypt = info[0]->BooleanValue(isolate);
  std::string_view label;
  std::string_view data;
  const EVP_MD* md = HashArgument(info, 2);
  EVP_PKEY* key = md == nullptr ? nullptr : KeyArgument(info, 1);
  if (key == nullptr || !BytesArgument(info, 3, &label) || !BytesArgument(info, 4, &data)) return;
  PkeyCtxPtr ctx(EVP_PKEY_CTX_new(key, nullptr));
  bool ok = ctx != nullptr && (encrypt ? EVP_PKEY_encrypt_init(ctx.get()) : EVP_PKEY_decrypt_init(ctx.get())) == 1 &&
            EVP_PKEY_CTX_set_rsa_padding(ctx.get(), RSA_PKCS1_OAEP_PADDING) == 1 &&
            EVP_PKEY_CTX_set_rsa_oaep_md(ctx.get(), md) == 1 && EVP_PKEY_CTX_set_rsa_mgf1_md(ctx.get(), md) == 1;
  if (ok && !label.empty()) {
    // OpenSSL takes ownership of the label's copy when it accepts it.
    void* copy = OPENSSL_memdup(label.data(), label.size());
    ok = copy != nullptr && EVP_PKEY_CTX_set0_rsa_oaep_label(ctx.get(), copy, static_cast<int>(label.size())) == 1;
    if (!ok) OPENSSL_free(copy);
  }
  size_t length = 0;
  auto run = [&](unsigned char* out) {
    return encrypt ? EVP_PKEY_encrypt(ctx.get(), out, &length, Bytes(data), data.size())
                   : EVP_PKEY_decrypt(ctx.get(), out, &length, Bytes(data), data.size());
  };
  ok = ok && run(nullptr) == 1;
  std::vector<unsigned char> out(length);
  ok = ok && run(out.data()) == 1;
  if (!ok) {
    Throw(isolate, "OperationError", "RSA-OAEP failed encrypt/decrypt.");
    return;
  }
  info.GetReturnValue().Set(NewBuffer(isolate, out.data(), length));
}

void CryptoEcdh(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  EVP_PKEY* mine = KeyArgument(info, 0);
  EVP_PKEY* theirs = mine == nullptr ? nullptr : KeyArgument(info, 1);
  if (theirs == nullptr) return;
  PkeyCtxPtr ctx(EVP_PKEY_CTX_new(mine, nullptr));
  size_t length = 0;
  bool ok = ctx != nullptr && EVP_PKEY_derive_init(ctx.get()) == 1 &&
            EVP_PKEY_derive_set_peer(ctx.get(), theirs) == 1 && EVP_PKEY_derive(ctx.get(), nullptr, &length) == 1;
  std::vector<unsigned char> out(length);
  ok = ok && EVP_PKEY_derive(ctx.get(), out.data(), &length) == 1;
  if (!ok) {
    Throw(isolate, "OperationError", "ECDH deriveBits failed.");
    return;
  }
  info.GetReturnValue().Set(NewBuffer(isolate, out.data(), length));
}

}  // namespace heapprof::internal
