// Web Crypto's operations: AES and RSA-OAEP ciphers, signature schemes,
// derivation (ECDH, PBKDF2, HKDF) and key import.

import { CryptoKey, keyMaterial, useKey } from './key.js';
import { DOMException } from '../dom_exception.js';
import { algorithmName, allowedUsages, bitLength, callNative, canonicalName, hashBlockBytes, integer, isAes, isEc, isRsa, normalizeHash, requireField, usageList } from './algorithms.js';
import { importAsymmetric } from './asymmetric_keys.js';
import { importSecret } from './secret_keys.js';
import { natives } from '../host.js';
import { toArrayBuffer, viewBytes } from '../bytes.js';
const { aes: nativeAes, ecdh: nativeEcdh, hkdf: nativeHkdf, pbkdf2: nativePbkdf2, rsaOaep } = natives;

// ---- operations ----
const aesTagLengths = [32, 64, 96, 104, 112, 120, 128];
// encrypt or decrypt (AES and RSA-OAEP); wrapKey and unwrapKey come here with their own usage.
function aesCipher(encrypt, algorithm, key, data, usage = encrypt ? 'encrypt' : 'decrypt') {
  const name = canonicalName(algorithm);
  const secret = useKey(key, name, usage);
  const bytes = viewBytes(data, 'data');
  // workerd's message counts what reached the cipher (AES-GCM's tag apart) and what it gave back.
  const fail = (input, written) => {
    const action = encrypt ? 'Encryption' : 'Decryption';
    return new DOMException(`${action} failed. This could be due to a ciphertext authentication failure, bad padding, incorrect CryptoKey, or another algorithm-specific reason. Input length was ${input}, output length expected to be ${written} for ${name}`, 'OperationError');
  };
  if (name === 'AES-GCM') {
    const iv = viewBytes(requireField(algorithm, 'iv'), 'iv');
    if (iv.length === 0) throw new DOMException('AES-GCM IV must not be empty.', 'OperationError');
    const tagLength = algorithm.tagLength === undefined ? 128 : integer(algorithm.tagLength);
    if (!aesTagLengths.includes(tagLength)) throw new DOMException(`Invalid AES-GCM tag length ${tagLength}.`, 'OperationError');
    if (!encrypt && bytes.length * 8 < tagLength) {
      throw new DOMException(`Ciphertext length of ${bytes.length * 8} bits must be greater than or equal to the size of the AES-GCM tag length of ${tagLength} bits.`, 'OperationError');
    }
    const aad = algorithm.additionalData === undefined ? new Uint8Array(0) : viewBytes(algorithm.additionalData, 'additionalData');
    try {
      return nativeAes('GCM', encrypt, secret, iv, bytes, aad, tagLength / 8, 0);
    } catch (e) {
      if (e instanceof Error && e.name === 'OperationError') throw fail(bytes.length - tagLength / 8, bytes.length - tagLength / 8);
      throw e;
    }
  }
  if (name === 'AES-CBC') {
    const iv = viewBytes(requireField(algorithm, 'iv'), 'iv');
    if (iv.length !== 16) throw new DOMException(`AES-CBC IV must be 16 bytes long (provided ${iv.length}).`, 'OperationError');
    try {
      return nativeAes('CBC', encrypt, secret, iv, bytes, undefined, 0, 0);
    } catch (e) {
      // OpenSSL holds back the last block until the padding checks out.
      if (e instanceof Error && e.name === 'OperationError') throw fail(bytes.length, bytes.length > 0 ? Math.floor((bytes.length - 1) / 16) * 16 : 0);
      throw e;
    }
  }
  if (name === 'AES-CTR') {
    const counter = viewBytes(requireField(algorithm, 'counter'), 'counter');
    const length = integer(requireField(algorithm, 'length'));
    if (counter.length !== 16) throw new DOMException(`Counter must have length of 16 bytes (provided ${counter.length}).`, 'OperationError');
    if (!(length >= 1 && length <= 128)) throw new DOMException(`Invalid counter of ${length} bits length provided.`, 'OperationError');
    return callNative(nativeAes, 'CTR', encrypt, secret, counter, bytes, undefined, 0, length);
  }
  if (name === 'RSA-OAEP') {
    const label = algorithm.label === undefined ? new Uint8Array(0) : viewBytes(algorithm.label, 'label');
    return callNative(rsaOaep, encrypt, secret, key.algorithm.hash.name, label, bytes);
  }
  throw new DOMException(`Unrecognized ${encrypt ? 'encryption' : 'decryption'} algorithm "${name}" requested.`, 'NotSupportedError');
}
// The scheme and salt length of an RSA or ECDSA signature, and its hash.
function signatureScheme(name, algorithm, key) {
  if (name === 'ECDSA') {
    const hash = algorithm == null || typeof algorithm !== 'object' ? undefined : algorithm.hash;
    if (hash === undefined) {
      throw new TypeError('Missing "hash" in AlgorithmIdentifier. (ECDSA requires that the hash algorithm be specified at call time rather than on the key. This differs from other WebCrypto algorithms for historical reasons.)');
    }
    return ['ecdsa', normalizeHash(hash), 0];
  }
  if (name === 'RSA-PSS') {
    const salt = algorithm == null || typeof algorithm !== 'object' ? undefined : algorithm.saltLength;
    if (salt === undefined) throw new DOMException('Failed to provide salt for RSA-PSS key operation which requires a salt', 'DataError');
    const saltLength = integer(salt);
    if (saltLength < 0) throw new DOMException(`SaltLength for RSA-PSS must be non-negative (provided ${saltLength}).`, 'DataError');
    // RFC 8017's EMSA-PSS bound: the hash, the salt and two bytes fit in the modulus (less its top bit).
    const hashBytes = { 'SHA-1': 20, 'SHA-256': 32, 'SHA-384': 48, 'SHA-512': 64 }[key.algorithm.hash.name];
    if (key.type === 'private' && hashBytes + saltLength + 2 > Math.ceil((key.algorithm.modulusLength - 1) / 8)) {
      throw new DOMException('key too small for signing with given digest and salt length', 'OperationError');
    }
    return ['pss', key.algorithm.hash.name, saltLength];
  }
  return ['pkcs1', key.algorithm.hash.name, 0];
}
function deriveBytes(algorithm, key, bits, usage) {
  const name = canonicalName(algorithm);
  const length = bitLength(bits);
  const material = useKey(key, name, usage);
  if (name === 'ECDH') {
    const peer = requireField(algorithm, 'public', 'derivedKeyParams');  // workerd's wording
    if (!(peer instanceof CryptoKey) || peer.type !== 'public') throw new DOMException('ECDH needs a public key to derive with.', 'InvalidAccessError');
    if (peer.algorithm.name !== 'ECDH') {
      throw new DOMException(`Private key for derivation is using "ECDH" while public key is using "${peer.algorithm.name}".`, 'InvalidAccessError');
    }
    if (peer.algorithm.namedCurve !== key.algorithm.namedCurve) {
      throw new DOMException(`Private key for derivation is using curve "${key.algorithm.namedCurve}" while public key is using "${peer.algorithm.namedCurve}".`, 'InvalidAccessError');
    }
    const secret = new Uint8Array(callNative(nativeEcdh, material, keyMaterial(peer)));
    if (length === null || length === undefined) return toArrayBuffer(secret);
    if (length > secret.length * 8) {
      throw new DOMException(`Derived key length (${length} bits) is too long (should be at most ${secret.length * 8} bits).`, 'OperationError');
    }
    const out = secret.slice(0, Math.ceil(length / 8));
    if (length % 8 !== 0) out[out.length - 1] &= 0xff << (8 - length % 8);
    return toArrayBuffer(out);
  }
  if (name !== 'PBKDF2' && name !== 'HKDF') throw new DOMException(`Unrecognized key derivation algorithm "${name}" requested.`, 'NotSupportedError');
  const hash = normalizeHash(requireField(algorithm, 'hash'));
  const salt = viewBytes(requireField(algorithm, 'salt'), 'salt');
  const extra = name === 'HKDF' ? viewBytes(requireField(algorithm, 'info'), 'info') : null;
  const iterations = name === 'PBKDF2' ? integer(requireField(algorithm, 'iterations')) : 0;
  if (iterations < -0x80000000 || iterations > 0x7fffffff) {
    throw new TypeError('Value out of range. Must be between -2147483648 and 2147483647 (inclusive).');
  }
  if (length === null || length === undefined) throw new DOMException(`${name} cannot derive a key with null length.`, 'OperationError');
  if (length % 8 !== 0) throw new DOMException(`${name} requires a derived key length that is a multiple of eight (requested ${length}).`, 'OperationError');
  if (name === 'PBKDF2') {
    if (!(iterations > 0)) throw new DOMException(`PBKDF2 requires a positive iteration count (requested ${iterations}).`, 'OperationError');
    return callNative(nativePbkdf2, hash, material, salt, iterations, length / 8);
  }
  return callNative(nativeHkdf, hash, material, salt, extra, length / 8);
}
// The length in bits of a key deriveKey is to make.
function derivedKeyLength(derivedKeyType) {
  const name = canonicalName(derivedKeyType);
  if (isAes(name)) return integer(requireField(derivedKeyType, 'length', 'derivedKeyParams'));
  if (name === 'HMAC') {
    if (derivedKeyType.length !== undefined) return integer(derivedKeyType.length);
    return hashBlockBytes[normalizeHash(requireField(derivedKeyType, 'hash', 'derivedKeyParams'))] * 8;
  }
  if (name === 'PBKDF2' || name === 'HKDF') return null;
  throw new DOMException(`Unrecognized derived key type "${name}" requested.`, 'NotSupportedError');
}

function importKey(format, keyData, algorithm, extractable, usages) {
  const name = canonicalName(algorithm);
  const list = usageList(usages);
  if (!allowedUsages[name]) throw new DOMException(`Unrecognized key import algorithm "${algorithmName(algorithm)}" requested.`, 'NotSupportedError');
  format = String(format);
  if (isRsa(name) || isEc(name)) return importAsymmetric(format, keyData, name, algorithm, Boolean(extractable), list);
  return importSecret(format, keyData, name, algorithm, Boolean(extractable), list);
}

export { aesTagLengths, aesCipher, signatureScheme, deriveBytes, derivedKeyLength, importKey };
