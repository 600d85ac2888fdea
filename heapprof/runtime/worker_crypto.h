// Web Crypto's primitives for the worker runtime, from OpenSSL's libcrypto:
// the prelude's crypto.getRandomValues, crypto.randomUUID and crypto.subtle
// call these. The prelude normalizes algorithms, checks keys' usages and
// shapes, and words the errors as workerd does; these do the cryptography.
//
// Asymmetric keys cross this boundary as handles: ArrayBuffers whose backing
// store owns an OpenSSL EVP_PKEY and frees it when V8 releases the buffer
// (the last CryptoKey holding it collected, or the isolate disposed). A key
// is parsed once, at import or generation.
//
// Errors are thrown as Error objects whose name is a DOMException name
// (DataError, OperationError, NotSupportedError); the prelude rethrows them
// as DOMExceptions.
#pragma once

#include <v8.h>

namespace heapprof::internal {

// randomFill(view): fills an ArrayBufferView with cryptographically strong bytes.
void CryptoRandomFill(const v8::FunctionCallbackInfo<v8::Value>& info);
// digest(name, data) -> ArrayBuffer; name is "SHA-1", "SHA-256", "SHA-384", "SHA-512" or "MD5".
void CryptoDigest(const v8::FunctionCallbackInfo<v8::Value>& info);
// hmac(hashName, key, data) -> ArrayBuffer.
void CryptoHmac(const v8::FunctionCallbackInfo<v8::Value>& info);
// equal(a, b) -> boolean, in time that does not depend on where they differ.
void CryptoTimingSafeEqual(const v8::FunctionCallbackInfo<v8::Value>& info);

// keyInfo(der, isPrivate) -> {kty: "RSA"|"EC", handle, modulusLength?,
// publicExponent?, curve?}: parses a SubjectPublicKeyInfo or PKCS #8 key;
// DataError for bytes that are not one.
void CryptoKeyInfo(const v8::FunctionCallbackInfo<v8::Value>& info);
// keyFromJwk({kty, crv?, n, e, d, p, q, dp, dq, qi, x, y} as bytes) -> keyInfo's answer.
void CryptoKeyFromJwk(const v8::FunctionCallbackInfo<v8::Value>& info);
// keyToDer(handle, isPrivate) -> ArrayBuffer with the PKCS #8 or SubjectPublicKeyInfo DER.
void CryptoKeyToDer(const v8::FunctionCallbackInfo<v8::Value>& info);
// keyToJwk(handle, isPrivate) -> the JWK members as bytes ({n, e, d, ...} or {x, y, d}).
void CryptoKeyToJwk(const v8::FunctionCallbackInfo<v8::Value>& info);
// ecFromRaw(curve, point) -> keyInfo's answer for an uncompressed or compressed point.
void CryptoEcFromRaw(const v8::FunctionCallbackInfo<v8::Value>& info);
// ecToRaw(handle) -> ArrayBuffer with the uncompressed point.
void CryptoEcToRaw(const v8::FunctionCallbackInfo<v8::Value>& info);
// generateKeyPair("RSA", bits, exponentBytes) or ("EC", curve) -> keyInfo's answer; the
// prelude's private and public CryptoKeys share its handle.
void CryptoGenerateKeyPair(const v8::FunctionCallbackInfo<v8::Value>& info);
// sign(scheme, handle, hash, saltLength, data) -> ArrayBuffer; scheme is "pkcs1", "pss" or
// "ecdsa" (ECDSA signatures are r || s, as Web Crypto has them).
void CryptoSign(const v8::FunctionCallbackInfo<v8::Value>& info);
// verify(scheme, handle, hash, saltLength, signature, data) -> boolean.
void CryptoVerify(const v8::FunctionCallbackInfo<v8::Value>& info);
// rsaOaep(encrypt, handle, hash, label, data) -> ArrayBuffer.
void CryptoRsaOaep(const v8::FunctionCallbackInfo<v8::Value>& info);
// aes(mode, encrypt, key, iv, data, additionalData, tagBytes, counterBits) -> ArrayBuffer;
// mode is "GCM", "CBC" or "CTR".
void CryptoAes(const v8::FunctionCallbackInfo<v8::Value>& info);
// pbkdf2(hash, password, salt, iterations, bytes) -> ArrayBuffer.
void CryptoPbkdf2(const v8::FunctionCallbackInfo<v8::Value>& info);
// hkdf(hash, key, salt, info, bytes) -> ArrayBuffer.
void CryptoHkdf(const v8::FunctionCallbackInfo<v8::Value>& info);
// ecdh(privateHandle, publicHandle) -> ArrayBuffer with the shared secret's x coordinate.
void CryptoEcdh(const v8::FunctionCallbackInfo<v8::Value>& info);

}  // namespace heapprof::internal
