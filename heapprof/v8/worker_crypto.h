// Web Crypto's primitives for the worker runtime, from OpenSSL's libcrypto:
// the prelude's crypto.getRandomValues, crypto.randomUUID and crypto.subtle
// (digest, HMAC sign and verify) call these.
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

}  // namespace heapprof::internal
