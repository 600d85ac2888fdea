// Web Crypto's algorithm names, hashes, usages and members, normalized and
// checked as workerd does.

import { DOMException } from '../dom_exception.js';
import { atob, btoa } from '../encoding.js';

// crypto.subtle after the W3C Web Cryptography spec, worded as workerd words
// its errors. Algorithms are normalized and checked here; the cryptography is
// OpenSSL's (worker_crypto.cpp). A CryptoKey holds its secret bytes, or for
// RSA and EC a handle: an ArrayBuffer whose backing store owns OpenSSL's
// parsed key, freed by V8 with the last CryptoKey holding it.
const hashNames = new Map([['sha-1', 'SHA-1'], ['sha-256', 'SHA-256'], ['sha-384', 'SHA-384'], ['sha-512', 'SHA-512'], ['md5', 'MD5']]);
const hashBlockBytes = { 'SHA-1': 64, 'SHA-256': 64, 'SHA-384': 128, 'SHA-512': 128, 'MD5': 64 };
const algorithmName = algorithm => typeof algorithm === 'string' ? algorithm : algorithm && algorithm.name;
function normalizeHash(hash) {
  const name = hashNames.get(String(algorithmName(hash)).toLowerCase());
  if (name === undefined) throw new DOMException('Unrecognized or unimplemented digest algorithm requested.', 'NotSupportedError');
  return name;
}
const base64url = {
  decode(text) {
    if (typeof text !== 'string' || !/^[A-Za-z0-9_-]*$/.test(text)) throw new DOMException('Invalid base64url in JSON Web Key.', 'DataError');
    // Index loops, not Uint8Array.from(string) or a spread: those make an iterator result per byte.
    const binary = atob(text.replace(/-/g, '+').replace(/_/g, '/'));
    const bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    return bytes;
  },
  encode(bytes) {
    let text = '';
    for (let i = 0; i < bytes.length; i += 0x8000) text += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
    return btoa(text).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  },
};
const algorithmNames = new Map(['RSASSA-PKCS1-v1_5', 'RSA-PSS', 'RSA-OAEP', 'ECDSA', 'ECDH', 'AES-GCM', 'AES-CBC', 'AES-CTR',
  'HMAC', 'PBKDF2', 'HKDF'].map(name => [name.toLowerCase(), name]));
const canonicalName = algorithm => {
  const name = algorithmName(algorithm);
  return algorithmNames.get(String(name).toLowerCase()) || String(name);
};
const keyUsages = ['encrypt', 'decrypt', 'sign', 'verify', 'deriveKey', 'deriveBits', 'wrapKey', 'unwrapKey'];
// Which usages each kind of key may have: [secret or private, public].
const allowedUsages = {
  'RSASSA-PKCS1-v1_5': [['sign'], ['verify']], 'RSA-PSS': [['sign'], ['verify']], 'ECDSA': [['sign'], ['verify']],
  'RSA-OAEP': [['decrypt', 'unwrapKey'], ['encrypt', 'wrapKey']], 'ECDH': [['deriveKey', 'deriveBits'], []],
  'AES-GCM': [['encrypt', 'decrypt', 'wrapKey', 'unwrapKey']], 'AES-CBC': [['encrypt', 'decrypt', 'wrapKey', 'unwrapKey']],
  'AES-CTR': [['encrypt', 'decrypt', 'wrapKey', 'unwrapKey']], 'HMAC': [['sign', 'verify']],
  'PBKDF2': [['deriveKey', 'deriveBits']], 'HKDF': [['deriveKey', 'deriveBits']],
};
const ecCurves = ['P-256', 'P-384', 'P-521'];
const isRsa = name => name === 'RSASSA-PKCS1-v1_5' || name === 'RSA-PSS' || name === 'RSA-OAEP';
const isEc = name => name === 'ECDSA' || name === 'ECDH';
const isAes = name => name === 'AES-GCM' || name === 'AES-CBC' || name === 'AES-CTR';

// A number member as workerd converts it: NaN and infinities are 0, fractions truncated.
const integer = value => { const n = Math.trunc(Number(value)); return Number.isFinite(n) ? n : 0; };
// deriveBits' length: null (all the bits there are) or an unsigned long.
function bitLength(length) {
  if (length === null || length === undefined) return null;
  const n = integer(length);
  if (n < 0 || n > 0xffffffff) throw new TypeError('deriveBits length must be an unsigned long integer.');
  return n;
}
function requireField(dictionary, field, where = 'algorithm') {
  const value = dictionary == null || typeof dictionary !== 'object' ? undefined : dictionary[field];
  if (value === undefined) throw new TypeError(`Missing field "${field}" in "${where}".`);
  return value;
}
function usageList(usages) {
  if (usages == null || typeof usages[Symbol.iterator] !== 'function') throw new TypeError('keyUsages must be a sequence of strings');
  const list = Array.from(usages, String);
  for (const usage of list) {
    if (!keyUsages.includes(usage)) throw new TypeError(`"${usage}" is not a valid KeyUsage`);
  }
  return keyUsages.filter(usage => list.includes(usage));
}
function checkUsages(verb, type, name, usages, allowed) {
  for (const usage of usages) {
    if (!allowed.includes(usage)) throw new SyntaxError(`Attempt to ${verb} ${type === '' ? '' : type + ' '}${name} key with invalid usage "${usage}".`);
  }
}
// Natives throw Errors named as DOMExceptions; these become DOMExceptions here.
function callNative(fn, ...args) {
  try {
    return fn(...args);
  } catch (e) {
    if (e instanceof Error && e.name !== 'Error' && e.name !== 'TypeError') throw new DOMException(e.message, e.name);
    throw e;
  }
}

export { hashNames, hashBlockBytes, algorithmName, normalizeHash, base64url, canonicalName, allowedUsages, ecCurves,
  isRsa, isEc, isAes, integer, bitLength, requireField, usageList, checkUsages, callNative };
