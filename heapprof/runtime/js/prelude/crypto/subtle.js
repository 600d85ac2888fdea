// crypto.subtle (SubtleCrypto) and the crypto global (Crypto).

import { CryptoKey, exportableKey, keyToken, useKey } from './key.js';
import { DOMException } from '../dom_exception.js';
import { aesCipher, deriveBytes, derivedKeyLength, importKey, signatureScheme } from './operations.js';
import { algorithmName, allowedUsages, base64url, callNative, canonicalName, checkUsages, hashBlockBytes, integer, isAes, isRsa, normalizeHash, requireField, usageList } from './algorithms.js';
import { asymmetricAlgorithm, exportAsymmetric, keyCurve } from './asymmetric_keys.js';
import { getRandomValues, randomUUID } from './random.js';
import { illegalConstructor, runtimeToken } from '../runtime_token.js';
import { natives, utf8Decode, utf8Encode } from '../host.js';
import { secretJwkAlg } from './secret_keys.js';
import { toArrayBuffer, viewBytes } from '../bytes.js';
const {
  digest: nativeDigest, generateKeyPair: nativeGenerateKeyPair, hmac: nativeHmac, sign: nativeSign,
  timingSafeEqual: nativeTimingSafeEqual, verify: nativeVerify, randomFill,
} = natives;

// crypto.subtle's methods, the prototype of SubtleCrypto below.
const subtleMethods = {
  async digest(algorithm, data) {
    return nativeDigest(normalizeHash(algorithm), viewBytes(data, 'digest data'));
  },
  async importKey(format, keyData, algorithm, extractable, usages) {
    return importKey(format, keyData, algorithm, extractable, usages);
  },
  async generateKey(algorithm, extractable, usages) {
    const name = canonicalName(algorithm);
    const list = usageList(usages);
    if (!allowedUsages[name] || name === 'PBKDF2' || name === 'HKDF') {
      throw new DOMException(`Unrecognized key generation algorithm "${algorithmName(algorithm)}" requested.`, 'NotSupportedError');
    }
    if (name === 'HMAC') {
      const hash = normalizeHash(requireField(algorithm, 'hash'));
      const bits = algorithm.length === undefined ? hashBlockBytes[hash] * 8 : integer(algorithm.length);
      const secret = randomFill(new Uint8Array(Math.ceil(bits / 8)));
      checkUsages('generate', 'secret', name, list, allowedUsages[name][0]);
      return new CryptoKey(keyToken, 'secret', secret, { name, hash: { name: hash }, length: bits }, extractable, list);
    }
    if (isAes(name)) {
      const bits = integer(requireField(algorithm, 'length'));
      if (![128, 192, 256].includes(bits)) {
        throw new DOMException(`Generated AES key length must be 128, 192, or 256 bits but requested ${bits}.`, 'OperationError');
      }
      checkUsages('generate', 'secret', name, list, allowedUsages[name][0]);
      return new CryptoKey(keyToken, 'secret', randomFill(new Uint8Array(bits / 8)), { name, length: bits }, extractable, list);
    }
    const [privateUsages, publicUsages] = allowedUsages[name];
    checkUsages('generate', '', name, list, privateUsages.concat(publicUsages));
    let info;
    if (isRsa(name)) {
      normalizeHash(requireField(algorithm, 'hash'));
      const bits = integer(requireField(algorithm, 'modulusLength'));
      const exponent = viewBytes(requireField(algorithm, 'publicExponent'), 'publicExponent');
      if (bits <= 0) throw new DOMException(`modulusLength must be greater than zero (requested ${bits}).`, 'OperationError');
      if (bits % 8 !== 0 || bits < 256 || bits > 16384) {
        throw new DOMException(`The modulus length must be a multiple of 8 and between 256 and 16k, but ${bits} was requested.`, 'OperationError');
      }
      const e = exponent.reduce((value, byte) => value * 256 + byte, 0);
      if (e !== 3 && e !== 65537) throw new DOMException(`The "publicExponent" must be either 3 or 65537, but got ${e}.`, 'OperationError');
      info = callNative(nativeGenerateKeyPair, 'RSA', bits, exponent);
    } else {
      info = callNative(nativeGenerateKeyPair, 'EC', keyCurve(algorithm));
    }
    const described = asymmetricAlgorithm(name, algorithm, info);
    // Both halves share one handle; the public CryptoKey is never asked for private operations.
    const privateKey = new CryptoKey(keyToken, 'private', info.handle, described, extractable, list.filter(u => privateUsages.includes(u)));
    const publicKey = new CryptoKey(keyToken, 'public', info.handle, { ...described }, true, list.filter(u => publicUsages.includes(u)));
    return { publicKey, privateKey };
  },
  async exportKey(format, key) {
    const material = exportableKey(key);
    format = String(format);
    if (key.type !== 'secret') return exportAsymmetric(format, key, material);
    if (format === 'raw') return toArrayBuffer(material);
    if (format === 'jwk') {
      return { kty: 'oct', key_ops: key.usages.slice(), alg: secretJwkAlg(key.algorithm), ext: true, k: base64url.encode(material) };
    }
    throw new DOMException(`Cannot export "${key.algorithm.name}" in "${format}" format.`, 'InvalidAccessError');
  },
  async sign(algorithm, key, data) {
    const name = canonicalName(algorithm);
    const material = useKey(key, name, 'sign');
    const bytes = viewBytes(data, 'signed data');
    if (name === 'HMAC') return nativeHmac(key.algorithm.hash.name, material, bytes);
    const [scheme, hash, salt] = signatureScheme(name, algorithm, key);
    return callNative(nativeSign, scheme, material, hash, salt, bytes);
  },
  async verify(algorithm, key, signature, data) {
    const name = canonicalName(algorithm);
    const material = useKey(key, name, 'verify');
    const bytes = viewBytes(data, 'signed data');
    const given = viewBytes(signature, 'signature');
    if (name === 'HMAC') return nativeTimingSafeEqual(nativeHmac(key.algorithm.hash.name, material, bytes), given);
    const [scheme, hash, salt] = signatureScheme(name, algorithm, key);
    return callNative(nativeVerify, scheme, material, hash, salt, given, bytes);
  },
  async encrypt(algorithm, key, data) { return aesCipher(true, algorithm, key, data); },
  async decrypt(algorithm, key, data) { return aesCipher(false, algorithm, key, data); },
  // A key exported and encrypted (a JWK as its JSON's UTF-8), and back.
  async wrapKey(format, key, wrappingKey, wrapAlgorithm) {
    const exported = await subtle.exportKey(format, key);
    const bytes = String(format) === 'jwk' ? utf8Encode(JSON.stringify(exported)) : exported;
    return aesCipher(true, wrapAlgorithm, wrappingKey, bytes, 'wrapKey');
  },
  async unwrapKey(format, wrappedKey, unwrappingKey, unwrapAlgorithm, unwrappedKeyAlgorithm, extractable, usages) {
    const bytes = aesCipher(false, unwrapAlgorithm, unwrappingKey, wrappedKey, 'unwrapKey');
    let keyData = bytes;
    if (String(format) === 'jwk') {
      try {
        keyData = JSON.parse(utf8Decode(new Uint8Array(bytes)));
      } catch {
        throw new DOMException('The unwrapped key is not a JSON Web Key.', 'DataError');
      }
    }
    return importKey(format, keyData, unwrappedKeyAlgorithm, extractable, usages);
  },
  async deriveBits(algorithm, baseKey, length) {
    return deriveBytes(algorithm, baseKey, length, 'deriveBits');
  },
  async deriveKey(algorithm, baseKey, derivedKeyType, extractable, usages) {
    const length = derivedKeyLength(derivedKeyType);
    const bits = deriveBytes(algorithm, baseKey, length, 'deriveKey');
    return importKey('raw', bits, derivedKeyType, extractable, usages);
  },
};
// workerd's extension: a comparison whose time depends on the length alone.
subtleMethods.timingSafeEqual = function timingSafeEqual(a, b) {
  for (const [i, value] of [a, b].entries()) {
    if (!(value instanceof ArrayBuffer || ArrayBuffer.isView(value))) {
      throw new TypeError(`Failed to execute 'timingSafeEqual' on 'SubtleCrypto': parameter ${i + 1} is not of type 'BufferSource'.`);
    }
  }
  if (a.byteLength !== b.byteLength) throw new TypeError('Input buffers must have the same byte length.');
  return nativeTimingSafeEqual(viewBytes(a), viewBytes(b));
};
class SubtleCrypto { constructor(token) { illegalConstructor(token); } }
for (const [name, method] of Object.entries(subtleMethods)) {
  Object.defineProperty(SubtleCrypto.prototype, name, { value: method, writable: true, configurable: true });
}
const subtle = new SubtleCrypto(runtimeToken);
class Crypto {
  constructor(token) { illegalConstructor(token); }
  get subtle() { return subtle; }
  getRandomValues(array) { return getRandomValues(array); }
  randomUUID() { return randomUUID(); }
}
const crypto = new Crypto(runtimeToken);

export { SubtleCrypto, Crypto, crypto, CryptoKey };
