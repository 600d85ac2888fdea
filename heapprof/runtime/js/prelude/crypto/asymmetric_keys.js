// RSA and EC keys: import and export (spki, pkcs8, jwk, raw) through OpenSSL.

import { CryptoKey, keyToken } from './key.js';
import { DOMException } from '../dom_exception.js';
import { allowedUsages, base64url, callNative, checkUsages, ecCurves, isEc, isRsa, normalizeHash, requireField } from './algorithms.js';
import { copyBytes } from '../bytes.js';
import { natives } from '../host.js';
const {
  ecFromRaw: nativeEcFromRaw, ecToRaw: nativeEcToRaw, keyFromJwk: nativeKeyFromJwk, keyInfo: nativeKeyInfo,
  keyToDer: nativeKeyToDer, keyToJwk: nativeKeyToJwk,
} = natives;

// ---- RSA and EC keys ----
const rsaJwkAlg = (name, hash) => {
  const bits = hash.slice(4);
  if (name === 'RSASSA-PKCS1-v1_5') return 'RS' + bits;
  if (name === 'RSA-PSS') return 'PS' + bits;
  return hash === 'SHA-1' ? 'RSA-OAEP' : 'RSA-OAEP-' + bits;
};
function asymmetricAlgorithm(name, algorithm, info) {
  if (isRsa(name)) {
    return { name, modulusLength: info.modulusLength, publicExponent: info.publicExponent, hash: { name: normalizeHash(requireField(algorithm, 'hash')) } };
  }
  return { name, namedCurve: info.curve };
}
function keyCurve(algorithm) {
  const curve = String(requireField(algorithm, 'namedCurve'));
  if (!ecCurves.includes(curve)) throw new DOMException(`Unrecognized or unimplemented EC curve "${curve}" requested.`, 'NotSupportedError');
  return curve;
}
function importAsymmetric(format, keyData, name, algorithm, extractable, usages) {
  const curve = isEc(name) ? keyCurve(algorithm) : null;
  if (isRsa(name)) normalizeHash(requireField(algorithm, 'hash'));
  const kty = isRsa(name) ? 'RSA' : 'EC';
  let info, isPrivate;
  if (format === 'spki' || format === 'pkcs8') {
    const der = copyBytes(keyData);
    if (der === null) throw new TypeError(`a ${format} key must be an ArrayBuffer or an ArrayBufferView`);
    isPrivate = format === 'pkcs8';
    info = callNative(nativeKeyInfo, der, isPrivate);
  } else if (format === 'jwk') {
    if (keyData == null || typeof keyData !== 'object') throw new TypeError('a JSON Web Key must be an object');
    if (keyData.kty !== kty) {
      // workerd names RSASSA-PKCS1-v1_5 here for every RSA algorithm.
      const named = kty === 'RSA' ? 'RSASSA-PKCS1-v1_5' : name;
      throw new DOMException(`${named} "jwk" key import requires a JSON Web Key with Key Type parameter "kty" ("${keyData.kty}") equal to "${kty}".`, 'DataError');
    }
    isPrivate = keyData.d !== undefined;
    const fields = { kty, crv: curve };
    for (const member of kty === 'RSA' ? ['n', 'e', 'd', 'p', 'q', 'dp', 'dq', 'qi'] : ['x', 'y', 'd']) {
      if (keyData[member] !== undefined) fields[member] = base64url.decode(keyData[member]);
    }
    // As in workerd, an RSA JWK's "alg" is not held against the algorithm asked for.
    info = callNative(nativeKeyFromJwk, fields);
  } else if (format === 'raw' && isEc(name)) {
    isPrivate = false;
    const point = copyBytes(keyData);
    if (point === null) throw new TypeError('a raw key must be an ArrayBuffer or an ArrayBufferView');
    info = callNative(nativeEcFromRaw, curve, point);
  } else {
    throw new DOMException(`Unrecognized key import format "${format}".`, 'NotSupportedError');
  }
  if (info.kty !== kty) throw new DOMException(`Input was not an ${kty} key.`, 'DataError');
  if (curve !== null && info.curve !== curve) {
    throw new DOMException(`Imported ${info.curve} key does not match the requested curve ${curve}.`, 'DataError');
  }
  const type = isPrivate ? 'private' : 'public';
  checkUsages('import', type, name, usages, allowedUsages[name][isPrivate ? 0 : 1]);
  return new CryptoKey(keyToken, type, info.handle, asymmetricAlgorithm(name, algorithm, info), extractable, usages);
}
function exportAsymmetric(format, key, handle) {
  const { name } = key.algorithm;
  if (format === 'spki' || format === 'pkcs8') {
    const wanted = format === 'spki' ? 'public' : 'private';
    if (key.type !== wanted) {
      throw new DOMException(`Asymmetric ${format} export requires ${wanted} key (not "${key.type}").`, 'InvalidAccessError');
    }
    return callNative(nativeKeyToDer, handle, key.type === 'private');
  }
  if (format === 'raw' && isEc(name) && key.type === 'public') return callNative(nativeEcToRaw, handle);
  if (format !== 'jwk') throw new DOMException(`Cannot export "${name}" in "${format}" format.`, 'InvalidAccessError');
  const members = callNative(nativeKeyToJwk, handle, key.type === 'private');
  const encoded = {};
  for (const member of Object.keys(members)) encoded[member] = base64url.encode(members[member]);
  if (isRsa(name)) {
    const jwk = { kty: 'RSA', key_ops: key.usages.slice(), alg: rsaJwkAlg(name, key.algorithm.hash.name), ext: true };
    const order = key.type === 'private' ? ['d', 'n', 'e', 'p', 'q', 'dp', 'dq', 'qi'] : ['n', 'e'];
    for (const member of order) jwk[member] = encoded[member];
    return jwk;
  }
  const jwk = { kty: 'EC', key_ops: key.usages.slice(), ext: true, crv: key.algorithm.namedCurve, x: encoded.x, y: encoded.y };
  if (key.type === 'private') jwk.d = encoded.d;
  return jwk;
}

export { rsaJwkAlg, asymmetricAlgorithm, keyCurve, importAsymmetric, exportAsymmetric };
