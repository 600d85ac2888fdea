// OpenSSL behind the worker runtime's Web Crypto. Bad arguments throw a
// TypeError (or an Error named as a DOMException: NotSupportedError,
// DataError, OperationError); the prelude checks shapes first, so these are
// the last line. Every OpenSSL object lives in a unique_ptr with its own free
// function, so each return path releases what the call made.
#include "heapprof/runtime/worker_crypto.h"

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/crypto.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/kdf.h>
#include <openssl/param_build.h>
#include <openssl/rand.h>
#include <openssl/rsa.h>
#include <openssl/x509.h>

#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "heapprof/runtime/worker_natives.h"
#include "heapprof/v8/v8_util.h"

namespace heapprof::internal {
namespace {

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

namespace {

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
void FreeBytes(unsigned char* p) { OPENSSL_free(p); }
using OpensslBytes = std::unique_ptr<unsigned char, Deleter<FreeBytes>>;

const auto* Bytes(std::string_view s) { return reinterpret_cast<const unsigned char*>(s.data()); }

std::string StringArgument(const v8::FunctionCallbackInfo<v8::Value>& info, int index) {
  v8::Isolate* isolate = info.GetIsolate();
  return ValueToString(isolate, isolate->GetCurrentContext(), info[index]);
}

// info[index] as an int in [0, INT_MAX]: NaN and negatives are 0, larger numbers INT_MAX
// (the prelude checks ranges first; converting such doubles unclamped would be undefined).
int CountArgument(const v8::FunctionCallbackInfo<v8::Value>& info, int index) {
  double value = info[index]->NumberValue(info.GetIsolate()->GetCurrentContext()).FromMaybe(0);
  if (!(value > 0)) return 0;
  if (value >= static_cast<double>(std::numeric_limits<int>::max())) return std::numeric_limits<int>::max();
  return static_cast<int>(value);
}

// Web Crypto's curve names and OpenSSL's.
const char* OpensslCurve(std::string_view curve) {
  if (curve == "P-256") return "prime256v1";
  if (curve == "P-384") return "secp384r1";
  if (curve == "P-521") return "secp521r1";
  return nullptr;
}
std::string WebCurve(std::string_view group) {
  if (group == "prime256v1") return "P-256";
  if (group == "secp384r1") return "P-384";
  if (group == "secp521r1") return "P-521";
  return std::string(group);
}

// An EVP_PKEY from PKCS #8 (private) or SubjectPublicKeyInfo (public) DER;
// null for anything else, trailing bytes included.
PkeyPtr ParseKey(std::string_view der, bool is_private) {
  const unsigned char* p = Bytes(der);
  const unsigned char* end = p + der.size();
  PkeyPtr key;
  if (is_private) {
    Pkcs8Ptr pkcs8(d2i_PKCS8_PRIV_KEY_INFO(nullptr, &p, static_cast<long>(der.size())));
    if (pkcs8 != nullptr && p == end) key.reset(EVP_PKCS82PKEY(pkcs8.get()));
  } else {
    key.reset(d2i_PUBKEY(nullptr, &p, static_cast<long>(der.size())));
    if (p != end) key.reset();
  }
  if (key != nullptr && EVP_PKEY_get_base_id(key.get()) != EVP_PKEY_RSA &&
      EVP_PKEY_get_base_id(key.get()) != EVP_PKEY_EC) {
    key.reset();
  }
  return key;
}

void SetBytes(v8::Isolate* isolate, v8::Local<v8::Object> object, const char* name, const unsigned char* data,
              size_t size) {
  v8::Local<v8::ArrayBuffer> buffer = NewBuffer(isolate, data, size);
  // A Set on a fresh object fails only when execution is being terminated, which ends the call anyway.
  std::ignore =
      object->Set(isolate->GetCurrentContext(), NewString(isolate, name), v8::Uint8Array::New(buffer, 0, size));
}
void SetValue(v8::Isolate* isolate, v8::Local<v8::Object> object, const char* name, v8::Local<v8::Value> value) {
  std::ignore = object->Set(isolate->GetCurrentContext(), NewString(isolate, name), value);
}

std::vector<unsigned char> BignumBytes(const BIGNUM* bn, int pad) {
  std::vector<unsigned char> out(pad > 0 ? pad : BN_num_bytes(bn));
  if (pad > 0)
    BN_bn2binpad(bn, out.data(), pad);
  else
    BN_bn2bin(bn, out.data());
  return out;
}

BignumPtr KeyBignum(const EVP_PKEY* key, const char* name) {
  BIGNUM* bn = nullptr;
  if (EVP_PKEY_get_bn_param(key, name, &bn) != 1) return nullptr;
  return BignumPtr(bn);
}

int FieldBytes(const EVP_PKEY* key) { return (EVP_PKEY_get_bits(key) + 7) / 8; }

// keyInfo's answer for `key`: {kty, spki, pkcs8 (with the private half),
// modulusLength and publicExponent (RSA) or curve (EC)}; empty after throwing.
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

v8::Local<v8::ArrayBuffer> WrapKey(v8::Isolate* isolate, PkeyPtr key) {
  auto* handle = new KeyHandle{KeyHandle::kMagic, std::move(key)};
  std::unique_ptr<v8::BackingStore> store = v8::ArrayBuffer::NewBackingStore(
      handle, sizeof(KeyHandle), [](void*, size_t, void* data) { delete static_cast<KeyHandle*>(data); }, handle);
  return v8::ArrayBuffer::New(isolate, std::move(store));
}

// The key of the handle in info[index], or nullptr after throwing.
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

// keyInfo's answer for `key`: {kty, handle, modulusLength and publicExponent
// (RSA) or curve (EC)}; empty after throwing.
v8::MaybeLocal<v8::Object> DescribeKey(v8::Isolate* isolate, PkeyPtr key) {
  v8::Local<v8::Object> out = v8::Object::New(isolate);
  bool rsa = EVP_PKEY_get_base_id(key.get()) == EVP_PKEY_RSA;
  SetValue(isolate, out, "kty", NewString(isolate, rsa ? "RSA" : "EC"));
  if (rsa) {
    SetValue(isolate, out, "modulusLength", v8::Integer::New(isolate, EVP_PKEY_get_bits(key.get())));
    BignumPtr e = KeyBignum(key.get(), OSSL_PKEY_PARAM_RSA_E);
    if (e == nullptr) {
      Throw(isolate, "DataError", "the RSA key has no public exponent");
      return {};
    }
    std::vector<unsigned char> bytes = BignumBytes(e.get(), 0);
    SetBytes(isolate, out, "publicExponent", bytes.data(), bytes.size());
  } else {
    char group[64] = {};
    size_t length = 0;
    if (EVP_PKEY_get_utf8_string_param(key.get(), OSSL_PKEY_PARAM_GROUP_NAME, group, sizeof group, &length) != 1) {
      Throw(isolate, "DataError", "the EC key has no named curve");
      return {};
    }
    SetValue(isolate, out, "curve", NewString(isolate, WebCurve(group)));
  }
  SetValue(isolate, out, "handle", WrapKey(isolate, std::move(key)));
  return out;
}

void ReturnKey(const v8::FunctionCallbackInfo<v8::Value>& info, PkeyPtr key) {
  v8::Local<v8::Object> out;
  if (DescribeKey(info.GetIsolate(), std::move(key)).ToLocal(&out)) info.GetReturnValue().Set(out);
}

// The bytes of `object[name]`, or false when it is absent (undefined).
bool MemberBytes(v8::Isolate* isolate, v8::Local<v8::Object> object, const char* name, std::string_view* out) {
  v8::Local<v8::Value> value;
  if (!object->Get(isolate->GetCurrentContext(), NewString(isolate, name)).ToLocal(&value)) return false;
  return ViewBytes(value, out);
}

PkeyPtr KeyFromParams(const char* type, OSSL_PARAM_BLD* builder, bool is_private) {
  ParamsPtr params(OSSL_PARAM_BLD_to_param(builder));
  PkeyCtxPtr ctx(EVP_PKEY_CTX_new_from_name(nullptr, type, nullptr));
  EVP_PKEY* key = nullptr;
  if (params == nullptr || ctx == nullptr || EVP_PKEY_fromdata_init(ctx.get()) != 1 ||
      EVP_PKEY_fromdata(ctx.get(), &key, is_private ? EVP_PKEY_KEYPAIR : EVP_PKEY_PUBLIC_KEY, params.get()) != 1) {
    return nullptr;
  }
  return PkeyPtr(key);
}

// An EC key of `curve` from its uncompressed (or compressed) public point and,
// for a private key, its scalar.
PkeyPtr EcKey(const char* curve, std::string_view point, const BIGNUM* d) {
  ParamBldPtr builder(OSSL_PARAM_BLD_new());
  if (builder == nullptr || OSSL_PARAM_BLD_push_utf8_string(builder.get(), OSSL_PKEY_PARAM_GROUP_NAME, curve, 0) != 1 ||
      OSSL_PARAM_BLD_push_octet_string(builder.get(), OSSL_PKEY_PARAM_PUB_KEY, point.data(), point.size()) != 1 ||
      (d != nullptr && OSSL_PARAM_BLD_push_BN(builder.get(), OSSL_PKEY_PARAM_PRIV_KEY, d) != 1)) {
    return nullptr;
  }
  return KeyFromParams("EC", builder.get(), d != nullptr);
}

}  // namespace

void CryptoKeyInfo(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  std::string_view der;
  if (!BytesArgument(info, 0, &der)) return;
  bool is_private = info[1]->BooleanValue(isolate);
  PkeyPtr key = ParseKey(der, is_private);
  if (key == nullptr) {
    Throw(isolate, "DataError", is_private ? "Invalid PKCS8 input." : "Invalid SPKI input.");
    return;
  }
  ReturnKey(info, std::move(key));
}

void CryptoKeyFromJwk(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  v8::Local<v8::Context> context = isolate->GetCurrentContext();
  if (!info[0]->IsObject()) {
    Throw(isolate, "TypeError", "keyFromJwk() needs an object");
    return;
  }
  v8::Local<v8::Object> jwk = info[0].As<v8::Object>();
  v8::Local<v8::Value> kty_value;
  if (!jwk->Get(context, NewString(isolate, "kty")).ToLocal(&kty_value)) return;
  std::string kty = ValueToString(isolate, context, kty_value);
  std::string_view d;
  bool is_private = MemberBytes(isolate, jwk, "d", &d);
  PkeyPtr key;
  if (kty == "RSA") {
    const char* names[] = {"n", "e", "d", "p", "q", "dp", "dq", "qi"};
    const char* params[] = {OSSL_PKEY_PARAM_RSA_N,         OSSL_PKEY_PARAM_RSA_E,
                            OSSL_PKEY_PARAM_RSA_D,         OSSL_PKEY_PARAM_RSA_FACTOR1,
                            OSSL_PKEY_PARAM_RSA_FACTOR2,   OSSL_PKEY_PARAM_RSA_EXPONENT1,
                            OSSL_PKEY_PARAM_RSA_EXPONENT2, OSSL_PKEY_PARAM_RSA_COEFFICIENT1};
    ParamBldPtr builder(OSSL_PARAM_BLD_new());
    std::vector<BignumPtr> numbers;
    bool complete = builder != nullptr;
    for (size_t i = 0; complete && i < (is_private ? 8u : 2u); ++i) {
      std::string_view bytes;
      if (!MemberBytes(isolate, jwk, names[i], &bytes) || bytes.empty()) {
        Throw(isolate, "DataError",
              std::string("Invalid RSA key in JSON Web Key; missing or invalid ") + names[i] + ".");
        return;
      }
      numbers.emplace_back(BN_bin2bn(Bytes(bytes), static_cast<int>(bytes.size()), nullptr));
      complete =
          numbers.back() != nullptr && OSSL_PARAM_BLD_push_BN(builder.get(), params[i], numbers.back().get()) == 1;
    }
    if (complete) key = KeyFromParams("RSA", builder.get(), is_private);
  } else if (kty == "EC") {
    v8::Local<v8::Value> crv_value;
    if (!jwk->Get(context, NewString(isolate, "crv")).ToLocal(&crv_value)) return;
    const char* curve = OpensslCurve(ValueToString(isolate, context, crv_value));
    std::string_view x;
    std::string_view y;
    if (curve == nullptr || !MemberBytes(isolate, jwk, "x", &x) || !MemberBytes(isolate, jwk, "y", &y)) {
      Throw(isolate, "DataError", "Invalid EC key in JSON Web Key; missing or invalid crv, x or y.");
      return;
    }
    std::string point = "\x04" + std::string(x) + std::string(y);
    BignumPtr scalar(is_private ? BN_bin2bn(Bytes(d), static_cast<int>(d.size()), nullptr) : nullptr);
    PkeyPtr probe = EcKey(curve, point, nullptr);
    if (probe == nullptr || x.size() != static_cast<size_t>(FieldBytes(probe.get())) || x.size() != y.size()) {
      Throw(isolate, "OperationError",
            "Invalid EC key; public key coordinates \"x\" and \"y\" are invalid: Point is not on curve..");
      return;
    }
    key = is_private ? EcKey(curve, point, scalar.get()) : std::move(probe);
  } else {
    Throw(isolate, "DataError", "unsupported JSON Web Key type " + kty);
    return;
  }
  if (key == nullptr) {
    Throw(isolate, "DataError", "Invalid " + kty + " key in JSON Web Key.");
    return;
  }
  ReturnKey(info, std::move(key));
}

void CryptoKeyToDer(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  EVP_PKEY* key = KeyArgument(info, 0);
  if (key == nullptr) return;
  unsigned char* der = nullptr;
  int size = 0;
  if (info[1]->BooleanValue(isolate)) {
    Pkcs8Ptr pkcs8(EVP_PKEY2PKCS8(key));
    size = pkcs8 == nullptr ? 0 : i2d_PKCS8_PRIV_KEY_INFO(pkcs8.get(), &der);
  } else {
    size = i2d_PUBKEY(key, &der);
  }
  OpensslBytes encoded(der);
  if (size <= 0) {
    Throw(isolate, "OperationError", "OpenSSL could not encode the key");
    return;
  }
  info.GetReturnValue().Set(NewBuffer(isolate, encoded.get(), size));
}

void CryptoKeyToJwk(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  EVP_PKEY* key = KeyArgument(info, 0);
  if (key == nullptr) return;
  bool is_private = info[1]->BooleanValue(isolate);
  struct Member {
    const char* jwk;
    const char* param;
    bool is_private;
    bool padded;
  };
  static const Member kRsa[] = {
      {"n", OSSL_PKEY_PARAM_RSA_N, false, false},         {"e", OSSL_PKEY_PARAM_RSA_E, false, false},
      {"d", OSSL_PKEY_PARAM_RSA_D, true, false},          {"p", OSSL_PKEY_PARAM_RSA_FACTOR1, true, false},
      {"q", OSSL_PKEY_PARAM_RSA_FACTOR2, true, false},    {"dp", OSSL_PKEY_PARAM_RSA_EXPONENT1, true, false},
      {"dq", OSSL_PKEY_PARAM_RSA_EXPONENT2, true, false}, {"qi", OSSL_PKEY_PARAM_RSA_COEFFICIENT1, true, false}};
  static const Member kEc[] = {{"x", OSSL_PKEY_PARAM_EC_PUB_X, false, true},
                               {"y", OSSL_PKEY_PARAM_EC_PUB_Y, false, true},
                               {"d", OSSL_PKEY_PARAM_PRIV_KEY, true, true}};
  bool rsa = EVP_PKEY_get_base_id(key) == EVP_PKEY_RSA;
  v8::Local<v8::Object> out = v8::Object::New(isolate);
  for (const Member& member : rsa ? std::basic_string_view<Member>(kRsa, 8) : std::basic_string_view<Member>(kEc, 3)) {
    if (member.is_private && !is_private) continue;
    BignumPtr bn = KeyBignum(key, member.param);
    if (bn == nullptr) {
      Throw(isolate, "OperationError", std::string("the key has no ") + member.jwk);
      return;
    }
    std::vector<unsigned char> bytes = BignumBytes(bn.get(), member.padded ? FieldBytes(key) : 0);
    SetBytes(isolate, out, member.jwk, bytes.data(), bytes.size());
  }
  info.GetReturnValue().Set(out);
}

void CryptoEcFromRaw(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  const char* curve = OpensslCurve(StringArgument(info, 0));
  std::string_view point;
  if (!BytesArgument(info, 1, &point)) return;
  PkeyPtr key = curve == nullptr || point.empty() ? nullptr : EcKey(curve, point, nullptr);
  if (key == nullptr) {
    Throw(isolate, "DataError", "Failed to import raw EC key data: Invalid point encoding..");
    return;
  }
  ReturnKey(info, std::move(key));
}

void CryptoEcToRaw(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  EVP_PKEY* key = KeyArgument(info, 0);
  if (key == nullptr) return;
  BignumPtr x = KeyBignum(key, OSSL_PKEY_PARAM_EC_PUB_X);
  BignumPtr y = KeyBignum(key, OSSL_PKEY_PARAM_EC_PUB_Y);
  if (x == nullptr || y == nullptr) {
    Throw(isolate, "OperationError", "the EC key has no public point");
    return;
  }
  int size = FieldBytes(key);
  std::vector<unsigned char> point(1 + 2 * size);
  point[0] = 0x04;  // uncompressed
  BN_bn2binpad(x.get(), point.data() + 1, size);
  BN_bn2binpad(y.get(), point.data() + 1 + size, size);
  info.GetReturnValue().Set(NewBuffer(isolate, point.data(), point.size()));
}

void CryptoGenerateKeyPair(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  std::string kind = StringArgument(info, 0);
  PkeyCtxPtr ctx(EVP_PKEY_CTX_new_from_name(nullptr, kind == "RSA" ? "RSA" : "EC", nullptr));
  bool ready = ctx != nullptr && EVP_PKEY_keygen_init(ctx.get()) == 1;
  if (kind == "RSA") {
    std::string_view exponent;
    if (!BytesArgument(info, 2, &exponent)) return;
    BignumPtr e(BN_bin2bn(Bytes(exponent), static_cast<int>(exponent.size()), nullptr));
    ready = ready && e != nullptr && EVP_PKEY_CTX_set_rsa_keygen_bits(ctx.get(), CountArgument(info, 1)) == 1 &&
            EVP_PKEY_CTX_set1_rsa_keygen_pubexp(ctx.get(), e.get()) == 1;
  } else {
    const char* curve = OpensslCurve(StringArgument(info, 1));
    ready = ready && curve != nullptr && EVP_PKEY_CTX_set_group_name(ctx.get(), curve) == 1;
  }
  EVP_PKEY* generated = nullptr;
  if (!ready || EVP_PKEY_generate(ctx.get(), &generated) != 1) {
    Throw(isolate, "OperationError", "OpenSSL could not generate the " + kind + " key pair");
    return;
  }
  PkeyPtr key(generated);
  ReturnKey(info, std::move(key));
}

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

namespace {

const EVP_CIPHER* AesCipher(std::string_view mode, size_t key_bytes) {
  if (mode == "GCM") {
    return key_bytes == 16   ? EVP_aes_128_gcm()
           : key_bytes == 24 ? EVP_aes_192_gcm()
           : key_bytes == 32 ? EVP_aes_256_gcm()
                             : nullptr;
  }
  if (mode == "CBC") {
    return key_bytes == 16   ? EVP_aes_128_cbc()
           : key_bytes == 24 ? EVP_aes_192_cbc()
           : key_bytes == 32 ? EVP_aes_256_cbc()
                             : nullptr;
  }
  if (mode == "CTR") {
    return key_bytes == 16   ? EVP_aes_128_ctr()
           : key_bytes == 24 ? EVP_aes_192_ctr()
           : key_bytes == 32 ? EVP_aes_256_ctr()
                             : nullptr;
  }
  return nullptr;
}

// One CTR pass over `data` from counter block `iv`, appended to `out`.
bool CtrPass(const EVP_CIPHER* cipher, std::string_view key, const unsigned char* iv, std::string_view data,
             std::vector<unsigned char>* out) {
  CipherCtxPtr ctx(EVP_CIPHER_CTX_new());
  size_t at = out->size();
  out->resize(at + data.size());
  int length = 0;
  return ctx != nullptr && EVP_EncryptInit_ex(ctx.get(), cipher, nullptr, Bytes(key), iv) == 1 &&
         EVP_EncryptUpdate(ctx.get(), out->data() + at, &length, Bytes(data), static_cast<int>(data.size())) == 1;
}

}  // namespace

void CryptoAes(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  std::string mode = StringArgument(info, 0);
  bool encrypt = info[1]->BooleanValue(isolate);
  std::string_view key;
  std::string_view iv;
  std::string_view data;
  std::string_view aad;
  if (!BytesArgument(info, 2, &key) || !BytesArgument(info, 3, &iv) || !BytesArgument(info, 4, &data) ||
      (mode == "GCM" && !BytesArgument(info, 5, &aad))) {
    return;
  }
  auto tag_bytes = static_cast<size_t>(CountArgument(info, 6));
  const EVP_CIPHER* cipher = AesCipher(mode, key.size());
  if (cipher == nullptr) {
    Throw(isolate, "OperationError", "no AES-" + mode + " cipher for this key");
    return;
  }
  std::vector<unsigned char> out;
  const std::string failed =
      "Decryption failed. This could be due to a ciphertext authentication failure, bad padding, incorrect "
      "CryptoKey, or another algorithm-specific reason.";
  if (mode == "CTR") {
    // Only the counter block's rightmost `counterBits` bits count up and wrap;
    // OpenSSL carries into all 128, so a pass that would wrap is cut in two.
    int counter_bits = CountArgument(info, 7);
    if (iv.size() != 16 || counter_bits < 1 || counter_bits > 128) {
      Throw(isolate, "OperationError", "bad AES-CTR counter");
      return;
    }
    unsigned char block[16];
    std::memcpy(block, iv.data(), 16);
    unsigned __int128 counter = 0;
    for (unsigned char byte : block) counter = (counter << 8) | byte;
    unsigned __int128 blocks = (data.size() + 15) / 16;
    if (counter_bits < 128) {
      unsigned __int128 range = static_cast<unsigned __int128>(1) << counter_bits;
      unsigned __int128 low = counter & (range - 1);
      if (blocks > range) {
        Throw(isolate, "OperationError", "AES-CTR would reuse its counter for this much data");
        return;
      }
      if (low + blocks > range) {
        size_t first = static_cast<size_t>(range - low) * 16;
        bool ok = CtrPass(cipher, key, block, data.substr(0, first), &out);
        unsigned __int128 wrapped = counter & ~(range - 1);
        for (int i = 15; i >= 0; --i, wrapped >>= 8) block[i] = static_cast<unsigned char>(wrapped & 0xff);
        if (!ok || !CtrPass(cipher, key, block, data.substr(first), &out)) {
          Throw(isolate, "OperationError", "OpenSSL's AES-CTR failed");
          return;
        }
        info.GetReturnValue().Set(NewBuffer(isolate, out.data(), out.size()));
        return;
      }
    }
    if (!CtrPass(cipher, key, block, data, &out)) {
      Throw(isolate, "OperationError", "OpenSSL's AES-CTR failed");
      return;
    }
    info.GetReturnValue().Set(NewBuffer(isolate, out.data(), out.size()));
    return;
  }
  bool gcm = mode == "GCM";
  if (gcm && !encrypt && data.size() < tag_bytes) {
    Throw(isolate, "OperationError", failed);
    return;
  }
  std::string_view tag = gcm && !encrypt ? data.substr(data.size() - tag_bytes) : std::string_view();
  std::string_view body = gcm && !encrypt ? data.substr(0, data.size() - tag_bytes) : data;
  CipherCtxPtr ctx(EVP_CIPHER_CTX_new());
  int length = 0;
  bool ok =
      ctx != nullptr && EVP_CipherInit_ex(ctx.get(), cipher, nullptr, nullptr, nullptr, encrypt ? 1 : 0) == 1 &&
      (!gcm || EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_IVLEN, static_cast<int>(iv.size()), nullptr) == 1) &&
      EVP_CipherInit_ex(ctx.get(), nullptr, nullptr, Bytes(key), Bytes(iv), -1) == 1 &&
      (aad.empty() || EVP_CipherUpdate(ctx.get(), nullptr, &length, Bytes(aad), static_cast<int>(aad.size())) == 1);
  out.resize(body.size() + 16 + tag_bytes);
  int written = 0;
  ok = ok && EVP_CipherUpdate(ctx.get(), out.data(), &written, Bytes(body), static_cast<int>(body.size())) == 1;
  if (ok && !tag.empty()) {
    // OpenSSL reads the expected tag from a mutable buffer.
    std::string expected(tag);
    ok = EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_TAG, static_cast<int>(expected.size()), expected.data()) == 1;
  }
  int tail = 0;
  ok = ok && EVP_CipherFinal_ex(ctx.get(), out.data() + written, &tail) == 1;
  if (!ok) {
    Throw(isolate, "OperationError", encrypt ? "OpenSSL's AES-" + mode + " encryption failed" : failed);
    return;
  }
  written += tail;
  if (gcm && encrypt) {
    if (EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_GET_TAG, static_cast<int>(tag_bytes), out.data() + written) != 1) {
      Throw(isolate, "OperationError", "OpenSSL's AES-GCM gave no tag");
      return;
    }
    written += static_cast<int>(tag_bytes);
  }
  info.GetReturnValue().Set(NewBuffer(isolate, out.data(), written));
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
