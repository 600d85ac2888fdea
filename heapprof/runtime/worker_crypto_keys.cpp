// Web Crypto keys in OpenSSL: parsing SubjectPublicKeyInfo and PKCS #8,
// JWK members in and out, raw EC points, and key pair generation. Every
// parsed key becomes a handle (worker_crypto_util.h).
#include "heapprof/runtime/worker_crypto.h"

#include <openssl/core_names.h>
#include <openssl/rsa.h>

#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "heapprof/runtime/worker_crypto_util.h"
#include "heapprof/runtime/worker_natives.h"
#include "heapprof/v8/v8_util.h"

namespace heapprof::internal {

using namespace crypto;  // the helpers every crypto native uses

namespace {

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

}  // namespace heapprof::internal
