// Secret keys (HMAC, AES, PBKDF2, HKDF): import and JWK names.

import { CryptoKey, keyToken } from './key.js';
import { DOMException } from '../dom_exception.js';
import { allowedUsages, base64url, checkUsages, integer, isAes, normalizeHash, requireField } from './algorithms.js';
import { copyBytes } from '../bytes.js';

// ---- secret keys: HMAC, AES, PBKDF2, HKDF ----
function secretJwkAlg(algorithm) {
  if (algorithm.name === 'HMAC') return 'HS' + algorithm.hash.name.slice(4);
  return 'A' + algorithm.length + algorithm.name.slice(4);
}
function importSecret(format, keyData, name, algorithm, extractable, usages) {
  let secret;
  if (name === 'PBKDF2' || name === 'HKDF') {
    if (format !== 'raw') throw new DOMException(`${name} key must be imported in "raw" format (requested "${format}").`, 'NotSupportedError');
    if (extractable) throw new SyntaxError(`${name} key cannot be extractable.`);
  }
  if (format === 'raw') {
    secret = copyBytes(keyData);
    if (secret === null) throw new TypeError('a raw key must be an ArrayBuffer or an ArrayBufferView');
  } else if (format === 'jwk') {
    if (keyData == null || typeof keyData !== 'object') throw new TypeError('a JSON Web Key must be an object');
    if (keyData.kty !== 'oct') {
      throw new DOMException(`Symmetric "jwk" key import requires a JSON Web Key with Key Type parameter "kty" ("${keyData.kty}") equal to "oct".`, 'DataError');
    }
    if (typeof keyData.k !== 'string') throw new DOMException('Symmetric "jwk" key import requires a base64Url encoding of the key.', 'DataError');
    secret = base64url.decode(keyData.k);
  } else {
    throw new DOMException(`Unrecognized key import format "${format}".`, 'NotSupportedError');
  }
  checkUsages('import', 'secret', name, usages, allowedUsages[name][0]);
  let described;
  if (name === 'HMAC') {
    const hash = normalizeHash(requireField(algorithm, 'hash'));
    if (secret.length === 0) throw new DOMException('Imported HMAC key length (0) must be a non-zero value.', 'DataError');
    const length = algorithm.length === undefined ? secret.length * 8 : integer(algorithm.length);
    described = { name, hash: { name: hash }, length };
  } else if (isAes(name)) {
    if (![16, 24, 32].includes(secret.length)) {
      throw new DOMException(`Imported AES key length must be 128, 192, or 256 bits but provided ${secret.length * 8}.`, 'DataError');
    }
    described = { name, length: secret.length * 8 };
  } else {
    described = { name };
  }
  if (format === 'jwk') {
    const expected = secretJwkAlg(described);
    if (keyData.alg !== undefined && keyData.alg !== expected) {
      throw new DOMException(`Symmetric "jwk" key contains invalid "alg" value "${keyData.alg}", expected "${expected}".`, 'DataError');
    }
  }
  return new CryptoKey(keyToken, 'secret', secret, described, extractable, usages);
}

export { secretJwkAlg, importSecret };
