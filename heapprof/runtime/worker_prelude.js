// The JavaScript half of heapprof's worker runtime, embedded at build time
// (WorkerPrelude.cmake). Its completion value is the installer function.
//
// Where a real implementation exists in V8 or in a C library, these globals
// call it through `natives` (UTF-8, structured clone, OpenSSL for crypto);
// where a maintained npm implementation exists (streams), it comes in as
// `libraries` (heapprof/runtime/js/libraries.js, bundled at build time); what is
// written here follows the WHATWG/W3C specs' algorithms. What is not offered
// is absent (or refuses with a message), never faked.
(function installWorkerGlobals(natives, libraries, options) {
'use strict';
const {
  consoleWrite, requestParts, ownStrings, base64Functions, jsonResponder, utf8Encode, utf8Decode, structuredClone: nativeClone,
  randomFill, digest: nativeDigest, hmac: nativeHmac, timingSafeEqual: nativeTimingSafeEqual, zlibOpen, zlibRun, zlibClose,
  keyInfo: nativeKeyInfo, keyFromJwk: nativeKeyFromJwk, keyToJwk: nativeKeyToJwk, ecFromRaw: nativeEcFromRaw, keyToDer: nativeKeyToDer,
  ecToRaw: nativeEcToRaw, generateKeyPair: nativeGenerateKeyPair, sign: nativeSign, verify: nativeVerify, rsaOaep,
  aes: nativeAes, pbkdf2: nativePbkdf2, hkdf: nativeHkdf, ecdh: nativeEcdh, getAsyncFrame, setAsyncFrame,
} = natives;
const { makeDurableObjects, ...webLibraries } = libraries;  // Durable Objects: js/durable_objects.js
const { ReadableStream, WritableStream, TransformStream } = webLibraries;

// The legacy codes of DOMException's names (WebIDL), as constants on the
// class and its prototype and as an instance's `code` (0 for other names).
const domExceptionCodes = [
  ['IndexSizeError', 'INDEX_SIZE_ERR'], ['DOMStringSizeError', 'DOMSTRING_SIZE_ERR'],
  ['HierarchyRequestError', 'HIERARCHY_REQUEST_ERR'], ['WrongDocumentError', 'WRONG_DOCUMENT_ERR'],
  ['InvalidCharacterError', 'INVALID_CHARACTER_ERR'], ['NoDataAllowedError', 'NO_DATA_ALLOWED_ERR'],
  ['NoModificationAllowedError', 'NO_MODIFICATION_ALLOWED_ERR'], ['NotFoundError', 'NOT_FOUND_ERR'],
  ['NotSupportedError', 'NOT_SUPPORTED_ERR'], ['InUseAttributeError', 'INUSE_ATTRIBUTE_ERR'],
  ['InvalidStateError', 'INVALID_STATE_ERR'], ['SyntaxError', 'SYNTAX_ERR'],
  ['InvalidModificationError', 'INVALID_MODIFICATION_ERR'], ['NamespaceError', 'NAMESPACE_ERR'],
  ['InvalidAccessError', 'INVALID_ACCESS_ERR'], ['ValidationError', 'VALIDATION_ERR'],
  ['TypeMismatchError', 'TYPE_MISMATCH_ERR'], ['SecurityError', 'SECURITY_ERR'], ['NetworkError', 'NETWORK_ERR'],
  ['AbortError', 'ABORT_ERR'], ['URLMismatchError', 'URL_MISMATCH_ERR'], ['QuotaExceededError', 'QUOTA_EXCEEDED_ERR'],
  ['TimeoutError', 'TIMEOUT_ERR'], ['InvalidNodeTypeError', 'INVALID_NODE_TYPE_ERR'], ['DataCloneError', 'DATA_CLONE_ERR'],
];
const domExceptionCode = new Map(domExceptionCodes.map(([name], i) => [name, i + 1]));
class DOMException extends Error {
  // name and code are the instance's own read-only properties, as in workerd.
  constructor(message = '', name = 'Error') {
    super(message);
    const text = String(name);
    Object.defineProperty(this, 'code', { value: domExceptionCode.get(text) || 0, enumerable: true, configurable: true });
    Object.defineProperty(this, 'name', { value: text, enumerable: true, configurable: true });
  }
}
domExceptionCodes.forEach(([, constant], i) => {
  const property = { value: i + 1, enumerable: true, configurable: true };
  Object.defineProperty(DOMException, constant, property);
  Object.defineProperty(DOMException.prototype, constant, property);
});

// ---- bytes and text ----

// A private Uint8Array copy of a BufferSource, or null when `value` is not one.
function copyBytes(value) {
  if (value instanceof ArrayBuffer) return new Uint8Array(value.slice(0));
  if (ArrayBuffer.isView(value)) {
    return new Uint8Array(value.buffer.slice(value.byteOffset, value.byteOffset + value.byteLength));
  }
  return null;
}
// A Uint8Array over a BufferSource without copying; TypeError for anything else.
function viewBytes(value, what) {
  if (value instanceof ArrayBuffer) return new Uint8Array(value);
  if (ArrayBuffer.isView(value)) return new Uint8Array(value.buffer, value.byteOffset, value.byteLength);
  throw new TypeError(what + ' must be an ArrayBuffer or an ArrayBufferView');
}
// A native function given the name and length a method of the API has.
function nameNative(fn, name, length) {
  Object.defineProperty(fn, 'name', { value: name });
  Object.defineProperty(fn, 'length', { value: length });
  return fn;
}
const toArrayBuffer = bytes => bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);

class TextEncoder {
  get encoding() { return 'utf-8'; }
  encode(input = '') { return utf8Encode(String(input)); }  // replaced by the native below
  encodeInto(source, destination) {
    const bytes = utf8Encode(String(source));
    // Whole code points only: stop before a UTF-8 sequence that does not fit.
    let written = Math.min(bytes.length, destination.length);
    while (written > 0 && written < bytes.length && (bytes[written] & 0xc0) === 0x80) written--;
    destination.set(bytes.subarray(0, written));
    const read = utf8Decode(bytes.subarray(0, written)).length;
    return { read, written };
  }
}
// encode() is the native itself, as workerd's is C++: the bytes are charged to
// the worker's caller, with no frame of the runtime's in between.
Object.defineProperty(TextEncoder.prototype, 'encode', { value: nameNative(utf8Encode, 'encode', 0) });

const utf8Labels = new Set(['utf-8', 'utf8', 'unicode-1-1-utf-8', 'unicode11utf8', 'unicode20utf8', 'x-unicode20utf8']);
// How many bytes at the end of `bytes` start a UTF-8 sequence that is not complete yet.
function incompleteTail(bytes) {
  for (let back = 1; back <= 3 && back <= bytes.length; back++) {
    const b = bytes[bytes.length - back];
    if ((b & 0xc0) === 0x80) continue;  // a continuation byte: look further back
    const need = b >= 0xf0 ? 4 : b >= 0xe0 ? 3 : b >= 0xc0 ? 2 : 1;
    return need > back ? back : 0;
  }
  return 0;
}
class TextDecoder {
  #fatal; #ignoreBOM;
  constructor(label = 'utf-8', options = {}) {
    if (!utf8Labels.has(String(label).trim().toLowerCase())) {
      throw new RangeError('heapprof\'s runtime decodes UTF-8 only, not "' + label + '"');
    }
    this.#fatal = Boolean(options.fatal);
    this.#ignoreBOM = Boolean(options.ignoreBOM);
  }
  get encoding() { return 'utf-8'; }
  get fatal() { return this.#fatal; }
  get ignoreBOM() { return this.#ignoreBOM; }
  #pending = null;  // the bytes of an incomplete UTF-8 sequence kept by decode(..., { stream: true })
  #bomSeen = false;
  decode(input = new Uint8Array(0), options = {}) {
    let bytes = viewBytes(input, 'TextDecoder.decode input');
    const stream = Boolean(options && options.stream);
    if (this.#pending !== null) {
      const joined = new Uint8Array(this.#pending.length + bytes.length);
      joined.set(this.#pending);
      joined.set(bytes, this.#pending.length);
      bytes = joined;
      this.#pending = null;
    }
    if (stream) {
      const keep = incompleteTail(bytes);
      if (keep > 0) { this.#pending = bytes.slice(bytes.length - keep); bytes = bytes.subarray(0, bytes.length - keep); }
    }
    if (!this.#ignoreBOM && !this.#bomSeen && bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) {
      bytes = bytes.subarray(3);
    }
    if (bytes.length > 0) this.#bomSeen = stream;
    else if (!stream) this.#bomSeen = false;
    const text = utf8Decode(bytes);
    // Valid UTF-8 round-trips byte for byte; anything else had a replacement.
    if (this.#fatal && text.includes('\ufffd')) {
      const again = utf8Encode(text);
      if (again.length !== bytes.length || again.some((b, i) => b !== bytes[i])) {
        throw new TypeError('Failed to decode input.');
      }
    }
    return text;
  }
}

// atob (HTML's forgiving base64) and btoa over Latin-1 strings: native
// functions, as workerd's are, so that the decoded string is the one
// allocation and is charged to the worker's caller (worker_natives.cpp).
const [atob, btoa] = base64Functions(kind => kind === 'btoa'
  ? new DOMException('btoa() can only operate on characters in the Latin1 (ISO/IEC 8859-1) range.', 'InvalidCharacterError')
  : new DOMException('atob() called with invalid base64-encoded data. (Only whitespace, \'+\', \'/\', alphanumeric ASCII, and up to two terminal \'=\' signs when the input data length is divisible by 4 are allowed.)', 'InvalidCharacterError'));

function structuredClone(value) {
  if (arguments.length === 0) throw new TypeError('structuredClone needs a value');
  try {
    return nativeClone(value);
  } catch (e) {
    // V8's serializer throws a plain Error for what it cannot clone; the spec names it.
    if (e instanceof Error && / could not be cloned\.$/.test(e.message)) throw new DOMException(e.message, 'DataCloneError');
    throw e;
  }
}

// ---- crypto (OpenSSL through natives) ----

function getRandomValues(array) {
  if (!(array instanceof Int8Array || array instanceof Uint8Array || array instanceof Uint8ClampedArray ||
        array instanceof Int16Array || array instanceof Uint16Array || array instanceof Int32Array ||
        array instanceof Uint32Array || array instanceof BigInt64Array || array instanceof BigUint64Array)) {
    throw new DOMException('getRandomValues() needs an integer typed array', 'TypeMismatchError');
  }
  if (array.byteLength > 65536) {
    throw new DOMException('getRandomValues() fills at most 65536 bytes at once', 'QuotaExceededError');
  }
  return randomFill(array);
}
function randomUUID() {
  const b = randomFill(new Uint8Array(16));
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const hex = Array.from(b, x => x.toString(16).padStart(2, '0')).join('');
  return hex.slice(0, 8) + '-' + hex.slice(8, 12) + '-' + hex.slice(12, 16) + '-' + hex.slice(16, 20) + '-' + hex.slice(20);
}

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

const keyToken = Symbol('CryptoKey');
let useKey, exportableKey, keyMaterial;  // set by CryptoKey's static block
class CryptoKey {
  #material;
  constructor(token, type, material, algorithm, extractable, usages) {
    if (token !== keyToken) throw new TypeError('Illegal constructor');
    if ((type === 'secret' || type === 'private') && usages.length === 0) {
      throw new SyntaxError('Secret/private CryptoKeys must have at least one usage.');
    }
    this.#material = material;
    Object.defineProperties(this, {
      usages: { value: Object.freeze(usages.slice()), enumerable: true },
      algorithm: { value: Object.freeze(algorithm), enumerable: true },
      extractable: { value: Boolean(extractable), enumerable: true },
      type: { value: type, enumerable: true },
    });
  }
  // The key's bytes (secret) or handle (private, public) for an operation
  // named `name` that needs `usage`. Private to this file: the static block
  // hands the functions out, so no worker reaches the key's material.
  static {
    useKey = (key, name, usage) => {
      if (!(key instanceof CryptoKey)) throw new TypeError('expected a CryptoKey');
      if (key.algorithm.name !== name) {
        throw new DOMException(`Requested algorithm "${name}" does not match this CryptoKey's algorithm "${key.algorithm.name}".`, 'InvalidAccessError');
      }
      if (!key.usages.includes(usage)) {
        throw new DOMException(`Requested key usage "${usage}" does not match any usage listed in this CryptoKey.`, 'InvalidAccessError');
      }
      return key.#material;
    };
    exportableKey = key => {
      if (!(key instanceof CryptoKey)) throw new TypeError('expected a CryptoKey');
      if (!key.extractable) throw new DOMException(`Attempt to export non-extractable ${key.algorithm.name} key.`, 'InvalidAccessError');
      return key.#material;
    };
    keyMaterial = key => key.#material;
  }
}

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
// The runtime makes the one instance of the classes a worker can test with
// instanceof but never construct (Crypto, SubtleCrypto, Navigator, Cache...).
const runtimeToken = Symbol('runtime');
const illegalConstructor = token => { if (token !== runtimeToken) throw new TypeError('Illegal constructor'); };
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

// ---- events and abort ----

// An event's state lives in private fields (a worker sees only the
// accessors, as in workerd); EventTarget moves it through dispatch with these,
// set by Event's static block:
let beginDispatch, endDispatch, stoppedImmediately;
class Event {
  #type; #bubbles; #cancelable; #composed;
  #defaultPrevented = false; #stopped = false; #stoppedImmediately = false;
  #target = null; #dispatching = false;
  constructor(type, init = {}) {
    if (arguments.length === 0) throw new TypeError('Failed to construct \'Event\': constructor parameter 1 is not of type \'string\'.');
    this.#type = String(type);
    this.#bubbles = Boolean(init.bubbles);
    this.#cancelable = Boolean(init.cancelable);
    this.#composed = Boolean(init.composed);
  }
  get type() { return this.#type; }
  get bubbles() { return this.#bubbles; }
  get cancelable() { return this.#cancelable; }
  get composed() { return this.#composed; }
  get defaultPrevented() { return this.#defaultPrevented; }
  get returnValue() { return !this.#defaultPrevented; }
  get isTrusted() { return false; }  // events a worker makes; the runtime dispatches none through here
  get timeStamp() { return 0; }  // workerd reports 0 too: no clock reading through events
  // There is no tree: an event is at its target while dispatched, nowhere before.
  get eventPhase() { return this.#dispatching ? Event.AT_TARGET : Event.NONE; }
  get target() { return this.#target; }
  get srcElement() { return this.#target; }
  // workerd leaves currentTarget at the target after the dispatch.
  get currentTarget() { return this.#target; }
  composedPath() { return this.#dispatching ? [this.#target] : []; }
  get cancelBubble() { return this.#stopped; }
  set cancelBubble(value) { if (value) this.#stopped = true; }
  preventDefault() { if (this.#cancelable) this.#defaultPrevented = true; }
  stopPropagation() { this.#stopped = true; }
  // Only the immediate flag, as workerd: cancelBubble stays false.
  stopImmediatePropagation() { this.#stoppedImmediately = true; }
  static {
    beginDispatch = (event, target) => { event.#target = target; event.#dispatching = true; };
    endDispatch = event => { event.#dispatching = false; };
    stoppedImmediately = event => event.#stoppedImmediately;
  }
}
for (const [name, value] of [['NONE', 0], ['CAPTURING_PHASE', 1], ['AT_TARGET', 2], ['BUBBLING_PHASE', 3]]) {
  Object.defineProperty(Event, name, { value, enumerable: true });
  Object.defineProperty(Event.prototype, name, { value, enumerable: true });
}
class CustomEvent extends Event {
  #detail;
  constructor(type, init = {}) { super(type, init); this.#detail = init.detail === undefined ? null : init.detail; }
  get detail() { return this.#detail; }
}
// The other events workerd defines, with its layout: ErrorEvent's fields are
// accessors, MessageEvent's and CloseEvent's the instance's own.
class ErrorEvent extends Event {
  #message; #filename; #lineno; #colno; #error;
  constructor(type, init = {}) {
    super(type, init);
    this.#message = init.message === undefined ? '' : String(init.message);
    this.#filename = init.filename === undefined ? '' : String(init.filename);
    this.#lineno = init.lineno === undefined ? 0 : init.lineno >>> 0;
    this.#colno = init.colno === undefined ? 0 : init.colno >>> 0;
    this.#error = init.error;
  }
  get message() { return this.#message; }
  get filename() { return this.#filename; }
  get lineno() { return this.#lineno; }
  get colno() { return this.#colno; }
  get error() { return this.#error; }
}
class MessageEvent extends Event {
  constructor(type, init = {}) {
    super(type, init);
    Object.defineProperties(this, {
      ports: { value: init.ports === undefined ? [] : Array.from(init.ports), enumerable: true },
      source: { value: init.source === undefined ? null : init.source, enumerable: true },
      lastEventId: { value: init.lastEventId === undefined ? '' : String(init.lastEventId), enumerable: true },
      origin: { value: init.origin === undefined ? '' : String(init.origin), enumerable: true },
      data: { value: init.data === undefined ? null : init.data, enumerable: true },
    });
  }
}
class CloseEvent extends Event {
  constructor(type, init = {}) {
    super(type, init);
    Object.defineProperties(this, {
      code: { value: init.code === undefined ? 0 : init.code & 0xffff, enumerable: true },
      reason: { value: init.reason === undefined ? '' : String(init.reason), enumerable: true },
      wasClean: { value: Boolean(init.wasClean), enumerable: true },
    });
  }
}
// The event a service-worker style script's fetch listeners get; only the
// runtime makes one (state: what respondWith was given).
class ExtendableEvent extends Event {
  #ctx;
  constructor(token, type, ctx) { illegalConstructor(token); super(type); this.#ctx = ctx; }
  waitUntil(promise) { this.#ctx.waitUntil(promise); }
}
class FetchEvent extends ExtendableEvent {
  #state;
  constructor(token, request, ctx, state) {
    super(token, 'fetch', ctx);
    this.request = request;
    this.#state = state;
  }
  respondWith(response) {
    if (this.#state.responded) throw new Error('respondWith() was already called for this request');
    this.#state.responded = true;
    this.#state.response = Promise.resolve(response);
  }
  passThroughOnException() {}  // there is no origin behind the runtime to pass the request to
}
class EventTarget {
  #listeners = new Map();
  addEventListener(type, listener, options) {
    if (listener == null) return;
    const list = this.#listeners.get(type) || [];
    if (list.some(entry => entry.listener === listener)) return;
    list.push({ listener, once: Boolean(options && options.once) });
    this.#listeners.set(type, list);
  }
  removeEventListener(type, listener) {
    const list = this.#listeners.get(type);
    if (list) this.#listeners.set(type, list.filter(entry => entry.listener !== listener));
  }
  dispatchEvent(event) {
    if (!(event instanceof Event)) throw new TypeError('Failed to execute \'dispatchEvent\' on \'EventTarget\': parameter 1 is not of type \'Event\'.');
    beginDispatch(event, this);
    try {
      // An on<type> handler (onabort...) runs before the listeners, as in workerd.
      const handler = this['on' + event.type];
      if (typeof handler === 'function') handler.call(this, event);
      for (const entry of (this.#listeners.get(event.type) || []).slice()) {
        if (stoppedImmediately(event)) break;
        if (entry.once) this.removeEventListener(event.type, entry.listener);
        if (typeof entry.listener === 'function') entry.listener.call(this, event);
        else entry.listener.handleEvent(event);
      }
    } finally {
      endDispatch(event);
    }
    return !event.defaultPrevented;
  }
}
let abortSignal;  // set by AbortSignal's static block
class AbortSignal extends EventTarget {
  #aborted = false; #reason = undefined; #onabort = null;
  get aborted() { return this.#aborted; }
  // Called by dispatchEvent (as on<type>) before the listeners.
  get onabort() { return this.#onabort; }
  set onabort(handler) { this.#onabort = typeof handler === 'function' ? handler : null; }
  get reason() { return this.#reason; }
  throwIfAborted() { if (this.#aborted) throw this.#reason; }
  // Private to this file (AbortController and the statics abort signals).
  static {
    abortSignal = (signal, reason) => {
      if (signal.#aborted) return;
      signal.#aborted = true;
      signal.#reason = reason === undefined ? new DOMException('The operation was aborted', 'AbortError') : reason;
      signal.dispatchEvent(new Event('abort'));
    };
  }
  static abort(reason) { const signal = new AbortSignal(); abortSignal(signal, reason); return signal; }
  static timeout(ms) {
    const signal = new AbortSignal();
    setTimeout(() => abortSignal(signal, new DOMException('The operation timed out', 'TimeoutError')), ms);
    return signal;
  }
  static any(signals) {
    const signal = new AbortSignal();
    for (const s of signals) {
      if (s.aborted) { abortSignal(signal, s.reason); break; }
      s.addEventListener('abort', () => abortSignal(signal, s.reason), { once: true });
    }
    return signal;
  }
}
class AbortController {
  #signal = new AbortSignal();
  get signal() { return this.#signal; }
  abort(reason) { abortSignal(this.#signal, reason); }
}

// ---- Headers, bodies, Request, Response ----

const tokenPattern = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
// Header names seen before -> their lower-case form: names repeat from request
// to request, so checking and lower-casing each again would allocate per header.
const headerNames = new Map();
function headerName(name) {
  const known = headerNames.get(name);
  if (known !== undefined) return known;
  const text = String(name);
  if (!tokenPattern.test(text)) throw new TypeError('Invalid header name: ' + JSON.stringify(text));
  const lower = text.toLowerCase();
  if (typeof name === 'string' && headerNames.size < 4096) headerNames.set(name, lower);
  return lower;
}
const headerWhitespace = /^[\t\n\r ]+|[\t\n\r ]+$/g;
const isHeaderWhitespace = code => code === 0x20 || code === 0x09 || code === 0x0a || code === 0x0d;
const invalidInHeaderValue = /[\0\r\n]/;
function headerValue(value) {
  let text = String(value);
  // Most values have nothing to trim: no regular expression, no new string.
  if (text.length !== 0 && (isHeaderWhitespace(text.charCodeAt(0)) || isHeaderWhitespace(text.charCodeAt(text.length - 1)))) {
    text = text.replace(headerWhitespace, '');
  }
  if (invalidInHeaderValue.test(text)) throw new TypeError('Invalid header value.');
  return text;
}
// workerd's wording, so a worker that reports the error answers the same.
const immutableHeaders = () => new TypeError('Can\'t modify immutable headers.');

// The sorted list of Headers without any (read only): most responses have none.
const noHeaders = Object.freeze([]);

let makeHeadersImmutable, adoptHeaders, flattenHeaders;  // set by Headers' static block
class Headers {
  // [name, value, name, value, ...] in insertion order, names lower-case; null
  // until the first header (most responses have none). A flat list is cheaper
  // than a Map of arrays for the handful of headers a message has.
  #list = null;
  #sortedList = null;  // #list sorted and combined, until the next change
  #immutable = false;  // Fetch's "immutable" guard: the received request's, Response.redirect()'s
  constructor(init) {
    if (init == null) return;
    if (init instanceof Headers) {
      if (init.#list !== null) this.#list = init.#list.slice();
    } else if (typeof init[Symbol.iterator] === 'function') {
      for (const pair of init) {
        const entry = Array.from(pair);
        if (entry.length !== 2) throw new TypeError('a Headers init pair must have exactly two items');
        this.append(entry[0], entry[1]);
      }
    } else if (typeof init === 'object') {
      for (const name in init) if (Object.prototype.hasOwnProperty.call(init, name)) this.append(name, init[name]);
    } else {
      throw new TypeError('Headers init must be an object, an array of pairs or Headers');
    }
  }
  append(name, value) {
    if (this.#immutable) throw immutableHeaders();
    const key = headerName(name);
    const v = headerValue(value);
    this.#sortedList = null;
    if (this.#list === null) this.#list = [key, v];
    else this.#list.push(key, v);
  }
  set(name, value) {
    if (this.#immutable) throw immutableHeaders();
    const key = headerName(name);
    const v = headerValue(value);
    const list = this.#list;
    this.#sortedList = null;
    if (list === null) { this.#list = [key, v]; return; }
    let at = -1;
    for (let i = 0; i < list.length; i += 2) {
      if (list[i] !== key) continue;
      if (at < 0) { at = i; list[i + 1] = v; } else { list.splice(i, 2); i -= 2; }
    }
    if (at < 0) list.push(key, v);
  }
  get(name) {
    const list = this.#list;
    if (list === null) { headerName(name); return null; }
    const key = headerName(name);
    let found = null;
    for (let i = 0; i < list.length; i += 2) {
      if (list[i] === key) found = found === null ? list[i + 1] : found + ', ' + list[i + 1];
    }
    return found;
  }
  // workerd's extension, for the one header whose values are never combined.
  getAll(name) {
    if (headerName(name) !== 'set-cookie') throw new TypeError('getAll() can only be used with the header name "Set-Cookie".');
    return this.getSetCookie();
  }
  getSetCookie() {
    const cookies = [];
    const list = this.#list;
    if (list !== null) for (let i = 0; i < list.length; i += 2) if (list[i] === 'set-cookie') cookies.push(list[i + 1]);
    return cookies;
  }
  has(name) {
    const key = headerName(name);
    const list = this.#list;
    if (list !== null) for (let i = 0; i < list.length; i += 2) if (list[i] === key) return true;
    return false;
  }
  delete(name) {
    if (this.#immutable) throw immutableHeaders();
    const key = headerName(name);
    const list = this.#list;
    this.#sortedList = null;
    if (list !== null) for (let i = list.length - 2; i >= 0; i -= 2) if (list[i] === key) list.splice(i, 2);
  }
  // The runtime's access to Headers, private to this file (a static would be
  // reachable by every worker):
  static {
    // from now on append, set and delete throw, as they do in workerd on the
    // headers of the request a worker receives;
    makeHeadersImmutable = headers => { headers.#immutable = true; };
    // Headers that take `list` over ([name, value, ...], names already
    // lower-case and valid, values valid) instead of copying it;
    adoptHeaders = list => {
      const headers = new Headers();
      if (list.length > 0) headers.#list = list;
      return headers;
    };
    // [name, value, ...] in iteration order (read only).
    flattenHeaders = headers => headers.#sortedCombined();
  }
  // [name, value, ...] sorted by name, values combined, Set-Cookie kept apart
  // (Fetch's "sort and combine"); the list itself when it is already so.
  static #sorted(list) {
    let ordered = true;
    for (let i = 2; i < list.length && ordered; i += 2) ordered = list[i - 2] < list[i] || (list[i] === 'set-cookie' && list[i - 2] === 'set-cookie');
    if (ordered) return list;
    const names = [];
    for (let i = 0; i < list.length; i += 2) if (!names.includes(list[i])) names.push(list[i]);
    names.sort();
    const out = [];
    for (const name of names) {
      let combined = null;
      for (let i = 0; i < list.length; i += 2) {
        if (list[i] !== name) continue;
        if (name === 'set-cookie') out.push(name, list[i + 1]);
        else combined = combined === null ? list[i + 1] : combined + ', ' + list[i + 1];
      }
      if (combined !== null) out.push(name, combined);
    }
    return out;
  }
  #sortedCombined() {
    if (this.#sortedList === null) this.#sortedList = this.#list === null ? noHeaders : Headers.#sorted(this.#list);
    return this.#sortedList;
  }
  // As the spec's iterator: by index into the current sorted list, so a change while iterating is seen.
  *entries() {
    for (let i = 0; ; i += 2) {
      const sorted = this.#sortedCombined();
      if (i >= sorted.length) return;
      yield [sorted[i], sorted[i + 1]];
    }
  }
  *keys() { for (const [name] of this.entries()) yield name; }
  *values() { for (const [, value] of this.entries()) yield value; }
  forEach(callback, thisArg) { for (const [name, value] of this.entries()) callback.call(thisArg, value, name, this); }
  [Symbol.iterator]() { return this.entries(); }
}

// ---- streams (web-streams-polyfill) and bodies ----

// Whether reading from the stream has begun: the Streams standard's
// [[disturbed]] slot, which web-streams-polyfill keeps as `_disturbed`
// (pinned in heapprof/runtime/js/package.json; worker_web_api_test checks it).
const isDisturbed = stream => stream._disturbed === true;

// A byte stream of one chunk (a copy: a byte stream's enqueue takes its buffer over).
function bytesStream(bytes) {
  return new ReadableStream({
    type: 'bytes',
    start(controller) {
      if (bytes.length > 0) controller.enqueue(bytes.slice());
      controller.close();
    },
  });
}

// Every chunk of a stream as one Uint8Array (chunks must be Uint8Arrays, as
// for a Response's body on the platform).
async function readAllBytes(stream) {
  const reader = stream.getReader();
  const chunks = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (!(value instanceof Uint8Array)) {
      const what = value === null ? 'null' : typeof value === 'object' ? Object.prototype.toString.call(value) : typeof value;
      const error = new TypeError('a body stream must produce Uint8Array chunks, not ' + what);
      reader.cancel(error).catch(() => {});
      throw error;
    }
    chunks.push(value);
    total += value.length;
  }
  if (chunks.length === 1) return chunks[0];
  const all = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) { all.set(c, at); at += c.length; }
  return all;
}

// TransformStreams, as in workerd (instanceof TransformStream holds).
class TextEncoderStream extends TransformStream {
  constructor() {
    let pending = '';  // a high surrogate whose pair may come in the next chunk
    super({
      transform(chunk, controller) {
        let text = pending + String(chunk);
        pending = '';
        const last = text.charCodeAt(text.length - 1);
        if (last >= 0xd800 && last <= 0xdbff) { pending = text.slice(-1); text = text.slice(0, -1); }
        if (text.length > 0) controller.enqueue(utf8Encode(text));
      },
      flush(controller) { if (pending !== '') controller.enqueue(utf8Encode('\ufffd')); },
    });
  }
  get encoding() { return 'utf-8'; }
}
class TextDecoderStream extends TransformStream {
  #decoder;
  constructor(label = 'utf-8', options = {}) {
    const decoder = new TextDecoder(label, options);
    super({
      transform(chunk, controller) {
        const text = decoder.decode(viewBytes(chunk, 'a TextDecoderStream chunk'), { stream: true });
        if (text !== '') controller.enqueue(text);
      },
      flush(controller) {
        const text = decoder.decode();
        if (text !== '') controller.enqueue(text);
      },
    });
    this.#decoder = decoder;
  }
  get encoding() { return this.#decoder.encoding; }
  get fatal() { return this.#decoder.fatal; }
  get ignoreBOM() { return this.#decoder.ignoreBOM; }
}

// CompressionStream and DecompressionStream through zlib (natives), chunk by
// chunk on one z_stream: a written chunk is fed to zlib while the readable
// side has room, and output comes out in pieces of at most 64 KiB. Up to
// 16 MiB of output waits unread; beyond that a write waits for the reader
// (backpressure), so a small input that inflates to gigabytes (a gzip bomb)
// takes memory only as fast as it is read. (workerd lets a write finish
// without a reader however much it inflates to; here the output past 16 MiB
// waits for one.) The z_stream is freed at the end, on an error, a cancel or
// an abort, or when V8 collects a stream dropped half-way.
const compressionFormats = new Set(['gzip', 'deflate', 'deflate-raw']);
const zlibPieceBytes = 64 * 1024;
const zlibQueuedBytes = 16 * 1024 * 1024;
const noBytes = new Uint8Array(0);
function zlibStreams(mode, format, what) {
  format = String(format);
  if (!compressionFormats.has(format)) throw new TypeError("The compression format must be either 'deflate', 'deflate-raw' or 'gzip'.");
  let handle = zlibOpen(mode, format);
  const inputs = [];   // written chunks zlib has not taken whole yet: { bytes, at, resolve, reject }
  let closing = null;  // { resolve, reject } once the writable side is closed
  let failed = false;
  let pumping = false;
  let spare = null;    // an output buffer zlib wrote nothing to (or whose bytes were copied out), for the next run
  let readable, writable;  // the two sides' controllers
  const release = () => {
    if (handle !== null) zlibClose(handle);
    handle = null;
  };
  // An error on either side errors both, fails the waiting writes and frees zlib.
  const fail = error => {
    if (failed) return;
    failed = true;
    release();
    for (const input of inputs.splice(0)) input.reject(error);
    if (closing !== null) closing.reject(error);
    readable.error(error);
    writable.error(error);
  };
  // Runs zlib while there is input (or the end to write) and room in the readable queue.
  const pump = () => {
    if (pumping) return;  // enqueue() calls pull() synchronously: this loop already runs
    pumping = true;
    try {
      while (handle !== null && readable.desiredSize > 0) {
        const input = inputs[0];
        if (input === undefined && closing === null) return;
        const output = spare ?? new Uint8Array(zlibPieceBytes);
        spare = null;
        let read, written, ended;
        try {
          [read, written, ended] = zlibRun(handle, input === undefined ? noBytes : input.bytes.subarray(input.at),
                                           input === undefined, output);
        } catch (error) {
          fail(error);
          return;
        }
        if (written === 0) {
          spare = output;
        } else if (written * 2 > output.length) {
          readable.enqueue(output.subarray(0, written));
        } else {  // a few bytes: do not pin 64 KiB to them
          readable.enqueue(output.slice(0, written));
          spare = output;
        }
        if (input !== undefined) {
          input.at += read;
          if (input.at === input.bytes.length) {
            inputs.shift();
            input.resolve();
          }
        } else if (ended) {
          release();
          readable.close();
          closing.resolve();
        }
      }
    } finally {
      pumping = false;
    }
  };
  return {
    readable: new ReadableStream({
      start(controller) { readable = controller; },
      pull() { pump(); },
      cancel(reason) { fail(reason); },
    }, { highWaterMark: zlibQueuedBytes, size: chunk => chunk.byteLength }),
    writable: new WritableStream({
      start(controller) { writable = controller; },
      write(chunk) {
        const bytes = copyBytes(chunk);  // a private copy: the writer may reuse its buffer before zlib reads it
        if (bytes === null) {
          const error = new TypeError(what + ' chunk must be an ArrayBuffer or an ArrayBufferView');
          fail(error);
          throw error;
        }
        if (bytes.length === 0) return undefined;
        return new Promise((resolve, reject) => {
          inputs.push({ bytes, at: 0, resolve, reject });
          pump();
        });
      },
      close() {
        return new Promise((resolve, reject) => {
          closing = { resolve, reject };
          pump();
        });
      },
      abort(reason) { fail(reason); },
    }),
  };
}
class CompressionStream {
  #streams;
  constructor(format) { this.#streams = zlibStreams('deflate', format, 'a CompressionStream'); }
  get readable() { return this.#streams.readable; }
  get writable() { return this.#streams.writable; }
}
class DecompressionStream {
  #streams;
  constructor(format) { this.#streams = zlibStreams('inflate', format, 'a DecompressionStream'); }
  get readable() { return this.#streams.readable; }
  get writable() { return this.#streams.writable; }
}

// A body is held as what was given: a string, bytes (a private Uint8Array
// copy) or a ReadableStream. A string or bytes becomes a stream only when
// `.body` is asked for, so the common path allocates no stream.
// Returns the value and gives `headers` the body's content-type unless it has
// one (no {value, type} pair: this runs for every Request and Response).
function extractBody(body, headers) {
  if (body == null) return null;
  if (typeof body === 'string') return typedBody(body, 'text/plain;charset=UTF-8', headers);
  const bytes = copyBytes(body);
  if (bytes !== null) return bytes;
  if (body instanceof URLSearchParams) return typedBody(body.toString(), 'application/x-www-form-urlencoded;charset=UTF-8', headers);
  if (body instanceof Blob) return typedBody(blobBytes(body), body.type || null, headers);
  if (body instanceof FormData) {
    const form = serializeMultipart(body);
    return typedBody(form.value, form.type, headers);
  }
  if (body instanceof ReadableStream) {
    if (body.locked || isDisturbed(body)) throw new TypeError('the body stream is locked or was already read from');
    return body;
  }
  return typedBody(String(body), 'text/plain;charset=UTF-8', headers);
}
function typedBody(value, type, headers) {
  if (type !== null && !headers.has('content-type')) headers.set('content-type', type);
  return value;
}
const bodyBytes = value => value === null ? new Uint8Array(0) : typeof value === 'string' ? utf8Encode(value) : value;
const bodyText = value => value === null ? '' : typeof value === 'string' ? value : utf8Decode(value);

let bodyContent, bodyForClone;  // set by Body's static block
class Body {
  #body;  // null, a string, a Uint8Array or a ReadableStream
  #used = false;
  // headers === null: the body of the request the host dispatches, a string
  // or null, stored as it is (its type is the one its sender gave, if any).
  constructor(body, headers) {
    this.#body = headers === null ? body : extractBody(body, headers);
  }
  get body() {
    if (this.#body === null) return null;
    if (!(this.#body instanceof ReadableStream)) {
      this.#body = this.#used ? usedStream() : bytesStream(bodyBytes(this.#body));
    }
    return this.#body;
  }
  get bodyUsed() { return this.#used || (this.#body instanceof ReadableStream && isDisturbed(this.#body)); }
  // The body's content (string, Uint8Array or null), or a promise of a
  // stream's bytes, marking it used. Not async, so that text() and json()
  // await only when there is a stream to read: one async call per read
  // instead of three, on the path nearly every body takes.
  #take() {
    if (this.bodyUsed) throw new TypeError('Body has already been used. It can only be used once. Use tee() first if you need to read it twice.');
    const body = this.#body;
    this.#used = true;
    if (!(body instanceof ReadableStream)) return body;
    if (body.locked) throw new TypeError('the body stream is locked to a reader');
    return readAllBytes(body);
  }
  async text() {
    const streamed = this.#body instanceof ReadableStream;
    const content = this.#take();
    return bodyText(streamed ? await content : content);
  }
  async arrayBuffer() { return toArrayBuffer(bodyBytes(await this.#take())); }
  async bytes() { return bodyBytes(await this.#take()).slice(); }
  async json() {
    const streamed = this.#body instanceof ReadableStream;
    const content = this.#take();
    return JSON.parse(bodyText(streamed ? await content : content));
  }
  async blob() { return new Blob([bodyBytes(await this.#take())], { type: this.headers.get('content-type') || '' }); }
  async formData() {
    const type = this.headers.get('content-type') || '';
    const essence = type.split(';')[0].trim().toLowerCase();
    if (essence === 'multipart/form-data') {
      const boundary = multipartBoundary(type);
      if (boundary === null) throw new TypeError('a multipart/form-data body needs a boundary in its content-type');
      return parseMultipart(bodyBytes(await this.#take()), boundary);
    }
    if (essence !== 'application/x-www-form-urlencoded') {
      throw new TypeError('formData() reads multipart/form-data or application/x-www-form-urlencoded bodies, not ' + JSON.stringify(type));
    }
    const form = new FormData();
    for (const [name, value] of new URLSearchParams(await this.text())) form.append(name, value);
    return form;
  }
  // Private to this file (Body is Request's and Response's prototype, so a
  // static of it would be reachable by workers):
  static {
    // for the runtime: the body's bytes or text (null when none), or a
    // promise of its bytes when it is a stream (read to its end);
    bodyContent = body => {
      if (!(body.#body instanceof ReadableStream)) return body.#body;
      if (body.bodyUsed || body.#body.locked) throw new TypeError('the Response\'s body stream was already read or is locked');
      return readAllBytes(body.#body);
    };
    // the body for a clone: strings and bytes are immutable once stored, so
    // they are shared; a stream is teed, one branch for each.
    bodyForClone = body => {
      if (body.bodyUsed) throw new TypeError('Body has already been used. It can only be used once.');
      if (!(body.#body instanceof ReadableStream)) return body.#body;
      const [mine, theirs] = body.#body.tee();
      body.#body = mine;
      return theirs;
    };
  }
}
// The `.body` of a body already consumed by text() & co.: a stream that was read to its end.
function usedStream() {
  const stream = bytesStream(new Uint8Array(0));
  stream.getReader().read();
  return stream;
}

const methods = new Set(['DELETE', 'GET', 'HEAD', 'OPTIONS', 'POST', 'PUT', 'PATCH']);
const normalizeMethod = method => {
  // Already normal (the host's and nearly every worker's): no upper-case copy.
  if (methods.has(method)) return method;
  const upper = String(method).toUpperCase();
  return methods.has(upper) ? upper : String(method);
};
const defaultCf = Object.freeze({
  asn: 13335, asOrganization: 'Cloudflare', colo: 'IAD', country: 'US', city: 'Ashburn', continent: 'NA',
  region: 'Virginia', regionCode: 'VA', timezone: 'America/New_York', latitude: '39.04372', longitude: '-77.48749',
  postalCode: '20147', httpProtocol: 'HTTP/2', tlsVersion: 'TLSv1.3', tlsCipher: 'AEAD-AES128-GCM-SHA256',
  clientTcpRtt: 10, requestPriority: '', edgeRequestKeepAliveStatus: 1,
});

// One frozen cf object per country, so the runtime does not allocate one per request.
const cfByCountry = new Map();
function cfFor(country) {
  if (country === null) return defaultCf;
  let cf = cfByCountry.get(country);
  if (cf === undefined) {
    cf = Object.freeze({ ...defaultCf, country });
    if (cfByCountry.size < 300) cfByCountry.set(country, cf);
  }
  return cf;
}

// The init of the request the host dispatches, filled by makeRequest for each
// request (one object, not one per request). With it the Request takes the
// Headers over instead of copying them and stores the body untyped.
// The init of `new Request(url)` and `new Response(body)` without one (read only), rather than a new {} each.
const noInit = Object.freeze({});
const hostInit = { method: 'GET', headers: null, body: null, cf: undefined, redirect: 'manual', signal: undefined };

class Request extends Body {
  #url; #method; #headers; #signal; #cf; #redirect;
  constructor(input, init = noInit) {
    const host = init === hostInit;
    const from = !host && input instanceof Request ? input : null;
    const headers = host ? init.headers : new Headers(init.headers !== undefined ? init.headers : from ? from.headers : undefined);
    const method = normalizeMethod(init.method !== undefined ? init.method : from ? from.method : 'GET');
    let body = init.body !== undefined ? init.body : from ? bodyForClone(from) : null;
    if ((method === 'GET' || method === 'HEAD') && body != null) {
      throw new TypeError('Request with a GET or HEAD method cannot have a body.');
    }
    super(body, host ? null : headers);
    this.#url = from ? from.url : hrefOf(String(input));
    this.#method = method;
    this.#headers = headers;
    this.#signal = init.signal || (from ? from.signal : null);  // created on first use
    this.#cf = init.cf !== undefined ? init.cf : from ? from.cf : undefined;
    this.#redirect = init.redirect || (from ? from.redirect : 'follow');
  }
  get url() { return this.#url; }
  get method() { return this.#method; }
  get headers() { return this.#headers; }
  get signal() {
    if (this.#signal === null) this.#signal = new AbortSignal();
    return this.#signal;
  }
  get cf() { return this.#cf; }
  get redirect() { return this.#redirect; }
  get integrity() { return ''; }
  get keepalive() { return false; }
  clone() { return new Request(this); }
}

const nullBodyStatus = status => status === 101 || status === 204 || status === 205 || status === 304;
// The init Response.json passes on: the Response takes its Headers over
// instead of copying them again.
class OwnedHeadersInit {
  constructor(status, statusText, headers) { this.status = status; this.statusText = statusText; this.headers = headers; }
}
// Response.cf of the Responses made with one (workerd keeps init.cf).
const responseCf = new WeakMap();
class Response extends Body {
  #status; #statusText; #headers; #type; #url;
  constructor(body = null, init = noInit) {
    const owned = init instanceof OwnedHeadersInit ? init.headers : null;
    const status = init.status === undefined ? 200 : Number(init.status);
    if (!Number.isInteger(status) || status < 200 || status > 599) {
      throw new RangeError('Responses may only be constructed with status codes in the range 200 to 599, inclusive.');
    }
    if (body != null && nullBodyStatus(status)) throw new TypeError('Response with null body status cannot have body');
    const headers = owned !== null ? owned : new Headers(init.headers);
    super(body, headers);
    this.#status = status;
    this.#statusText = init.statusText === undefined ? '' : String(init.statusText);
    this.#headers = headers;
    this.#type = 'default';
    this.#url = '';
    // Rare, so kept off the Response itself (no slot in every one).
    if (init.cf !== undefined) responseCf.set(this, init.cf);
  }
  get cf() { return responseCf.get(this); }
  // No WebSocket is offered, so no Response carries one.
  get webSocket() { return null; }
  get status() { return this.#status; }
  get statusText() { return this.#statusText; }
  get headers() { return this.#headers; }
  get ok() { return this.#status >= 200 && this.#status < 300; }
  get redirected() { return false; }
  get type() { return this.#type; }
  get url() { return this.#url; }
  clone() {
    return new Response(bodyForClone(this), { status: this.#status, statusText: this.#statusText, headers: this.#headers, cf: this.cf });
  }
  static json(data, init = noInit) { return finishJson(JSON.stringify(data), init); }  // replaced by the native below
  static error() {
    const response = new Response(null);
    response.#status = 0;
    response.#type = 'error';
    makeHeadersImmutable(response.#headers);
    return response;
  }
  static redirect(url, status = 302) {
    if (![301, 302, 303, 307, 308].includes(status)) throw new RangeError('Invalid redirect status: ' + status);
    const response = new Response(null, { status, headers: { location: new URL(String(url)).href } });
    makeHeadersImmutable(response.headers);
    return response;
  }
}
// Response.json is a native function, as workerd's is C++: V8 serializes the
// value with no frame of the runtime's on the stack, so the JSON text is
// charged to the worker's caller (worker_natives.cpp), and this makes the rest.
function finishJson(text, init = noInit) {
  if (text === undefined) throw new TypeError('Response.json: the value cannot be serialized to JSON');
  const headers = new Headers(init.headers);
  if (!headers.has('content-type')) headers.set('content-type', 'application/json');
  return new Response(text, new OwnedHeadersInit(init.status, init.statusText, headers));
}
Object.defineProperty(Response, 'json', { value: jsonResponder(finishJson) });

let blobBytes;  // set by Blob's static block
class Blob {
  #bytes; #type;
  constructor(parts = [], options = {}) {
    const chunks = [];
    for (const part of parts) {
      if (part instanceof Blob) chunks.push(part.#bytes);
      else chunks.push(copyBytes(part) || utf8Encode(String(part)));
    }
    const total = chunks.reduce((n, c) => n + c.length, 0);
    this.#bytes = new Uint8Array(total);
    let at = 0;
    for (const c of chunks) { this.#bytes.set(c, at); at += c.length; }
    const type = options.type === undefined ? '' : String(options.type);
    this.#type = /[^\u0020-\u007e]/.test(type) ? '' : type.toLowerCase();
  }
  get size() { return this.#bytes.length; }
  get type() { return this.#type; }
  async text() { return utf8Decode(this.#bytes); }
  async arrayBuffer() { return toArrayBuffer(this.#bytes); }
  async bytes() { return this.#bytes.slice(); }
  stream() { return bytesStream(this.#bytes); }
  slice(start = 0, end = this.size, type = '') {
    const norm = i => i < 0 ? Math.max(this.size + i, 0) : Math.min(i, this.size);
    return new Blob([this.#bytes.subarray(norm(start), Math.max(norm(start), norm(end)))], { type });
  }
  static { blobBytes = blob => blob.#bytes; }  // private to this file
}
class File extends Blob {
  #name; #lastModified;
  constructor(parts, name, options = {}) {
    super(parts, options);
    this.#name = String(name);
    this.#lastModified = options.lastModified === undefined ? Date.now() : Number(options.lastModified);
  }
  get name() { return this.#name; }
  get lastModified() { return this.#lastModified; }
}
class FormData {
  #entries = [];
  #entry(name, value, filename) {
    if (value instanceof Blob) {
      const file = value instanceof File && filename === undefined ? value : new File([value], filename === undefined ? 'blob' : filename, { type: value.type });
      return [String(name), file];
    }
    return [String(name), String(value)];
  }
  append(name, value, filename) { this.#entries.push(this.#entry(name, value, filename)); }
  set(name, value, filename) {
    const entry = this.#entry(name, value, filename);
    const i = this.#entries.findIndex(([n]) => n === entry[0]);
    if (i < 0) { this.#entries.push(entry); return; }
    this.#entries[i] = entry;
    this.#entries = this.#entries.filter(([n], j) => j <= i || n !== entry[0]);
  }
  get(name) { const e = this.#entries.find(([n]) => n === String(name)); return e ? e[1] : null; }
  getAll(name) { return this.#entries.filter(([n]) => n === String(name)).map(([, v]) => v); }
  has(name) { return this.#entries.some(([n]) => n === String(name)); }
  delete(name) { this.#entries = this.#entries.filter(([n]) => n !== String(name)); }
  *entries() { yield* this.#entries.map(e => e.slice()); }
  *keys() { for (const [n] of this.#entries) yield n; }
  *values() { for (const [, v] of this.#entries) yield v; }
  forEach(callback, thisArg) { for (const [n, v] of this.#entries) callback.call(thisArg, v, n, this); }
  [Symbol.iterator]() { return this.entries(); }
}

// multipart/form-data (RFC 7578): formData() parses it, a FormData body is
// serialized as it. Parts are found in a Latin-1 view of the bytes, so file
// contents stay byte for byte; names and text values are UTF-8.
function latin1(bytes) {
  let out = '';
  for (let i = 0; i < bytes.length; i += 8192) out += String.fromCharCode.apply(null, bytes.subarray(i, i + 8192));
  return out;
}
function latin1Bytes(text) {
  const out = new Uint8Array(text.length);
  for (let i = 0; i < text.length; i++) out[i] = text.charCodeAt(i);
  return out;
}
function multipartBoundary(type) {
  const m = /;\s*boundary=(?:"([^"]+)"|([^;\s]+))/i.exec(type);
  return m ? (m[1] !== undefined ? m[1] : m[2]) : null;
}
// A Content-Disposition parameter (name or filename), decoded; null when absent.
function dispositionParam(header, key) {
  const m = new RegExp(';\\s*' + key + '=(?:"([^"]*)"|([^;\\s]*))', 'i').exec(header);
  if (!m) return null;
  const raw = m[1] !== undefined ? m[1] : m[2];
  return utf8Decode(latin1Bytes(raw)).replace(/%22/g, '"').replace(/%0D/g, '\r').replace(/%0A/g, '\n');
}
function parseMultipart(bytes, boundary) {
  const text = latin1(bytes);
  const delimiter = '--' + boundary;
  const malformed = what => new TypeError('the multipart/form-data body is malformed: ' + what);
  const form = new FormData();
  let at = text.indexOf(delimiter);
  if (at < 0) throw malformed('no boundary delimiter');
  for (;;) {
    at += delimiter.length;
    if (text.startsWith('--', at)) return form;
    if (!text.startsWith('\r\n', at)) throw malformed('a delimiter is not followed by CRLF');
    const headersEnd = text.indexOf('\r\n\r\n', at);
    const next = headersEnd < 0 ? -1 : text.indexOf('\r\n' + delimiter, headersEnd + 4);
    if (next < 0) throw malformed('a part does not end with a delimiter');
    let name = null, filename = null, type = null;
    for (const line of text.slice(at + 2, headersEnd).split('\r\n')) {
      const colon = line.indexOf(':');
      const key = line.slice(0, colon).trim().toLowerCase();
      const value = line.slice(colon + 1).trim();
      if (key === 'content-disposition') {
        name = dispositionParam(value, 'name');
        filename = dispositionParam(value, 'filename');
      } else if (key === 'content-type') {
        type = value;
      }
    }
    if (name === null) throw malformed('a part has no name');
    const content = latin1Bytes(text.slice(headersEnd + 4, next));
    if (filename === null) form.append(name, utf8Decode(content));
    else form.append(name, new File([content], filename, { type: type === null ? 'text/plain' : type }));
    at = next + 2;
  }
}
function serializeMultipart(form) {
  const boundary = '----heapprof-formdata-' + Array.from(randomFill(new Uint8Array(12)), b => b.toString(16).padStart(2, '0')).join('');
  const escapeName = name => name.replace(/\r/g, '%0D').replace(/\n/g, '%0A').replace(/"/g, '%22');
  const chunks = [];
  for (const [name, value] of form) {
    const head = '--' + boundary + '\r\nContent-Disposition: form-data; name="' + escapeName(name) + '"';
    if (typeof value === 'string') {
      chunks.push(utf8Encode(head + '\r\n\r\n' + value.replace(/\r\n|\r|\n/g, '\r\n') + '\r\n'));
    } else {
      chunks.push(utf8Encode(head + '; filename="' + escapeName(value.name) + '"\r\nContent-Type: ' +
        (value.type || 'application/octet-stream') + '\r\n\r\n'), blobBytes(value), utf8Encode('\r\n'));
    }
  }
  chunks.push(utf8Encode('--' + boundary + '--\r\n'));
  const bytes = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const c of chunks) { bytes.set(c, at); at += c.length; }
  return { value: bytes, type: 'multipart/form-data; boundary=' + boundary };
}

// application/x-www-form-urlencoded parsing and serializing (the URL standard's).
// Most names and values have no '+' and no escape: they are returned as they are, without a copy.
const plusSigns = /\+/g;
const formDecode = s => {
  if (s.indexOf('+') >= 0) s = s.replace(plusSigns, ' ');
  if (s.indexOf('%') < 0) return s;
  try { return decodeURIComponent(s); } catch { return percentDecodeLoose(s); }
};
// The URL standard's percent-decode where decodeURIComponent gives up: a '%'
// without two hex digits stays as it is, and byte sequences that are not
// UTF-8 decode to U+FFFD ("%C3%A9%ZZ%FF" -> "\u00e9%ZZ\ufffd").
const isHexDigit = b => (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x46) || (b >= 0x61 && b <= 0x66);
function percentDecodeLoose(s) {
  const bytes = new TextEncoder().encode(s);
  const out = new Uint8Array(bytes.length);
  let n = 0;
  for (let i = 0; i < bytes.length; i++) {
    if (bytes[i] === 0x25 && i + 2 < bytes.length && isHexDigit(bytes[i + 1]) && isHexDigit(bytes[i + 2])) {
      out[n++] = parseInt(String.fromCharCode(bytes[i + 1], bytes[i + 2]), 16);
      i += 2;
    } else {
      out[n++] = bytes[i];
    }
  }
  return new TextDecoder().decode(out.subarray(0, n));
}
// Lone surrogates, which UTF-8 cannot hold: the URL standard encodes them as U+FFFD.
const loneSurrogates = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
const wellFormed = s => loneSurrogates.test(s) ? s.replace(loneSurrogates, '\ufffd') : s;
const formEncode = s => encodeURIComponent(wellFormed(s)).replace(/%20/g, '+').replace(/[!'()~]/g, c => '%' + c.charCodeAt(0).toString(16).toUpperCase());
// The name-value pairs of an application/x-www-form-urlencoded string.
function parseQuery(text) {
  const list = [];
  const parts = (text.charCodeAt(0) === 0x3f ? text.slice(1) : text).split('&');
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i];
    if (!part) continue;
    const eq = part.indexOf('=');
    list.push(eq < 0 ? [formDecode(part), ''] : [formDecode(part.slice(0, eq)), formDecode(part.slice(eq + 1))]);
  }
  return list;
}
let ownParams, resetParams, queryChanged;  // set by the static blocks of URLSearchParams and URL
class URLSearchParams {
  #list = [];
  #owner = null;  // the URL whose searchParams these are: its query follows their changes
  constructor(init = '') {
    if (init instanceof URLSearchParams) {
      this.#list = init.#list.map(e => e.slice());
    } else if (typeof init === 'object' && init !== null && typeof init[Symbol.iterator] === 'function') {
      for (const pair of init) {
        const entry = Array.from(pair);
        if (entry.length !== 2) throw new TypeError('a URLSearchParams init pair must have exactly two items');
        this.#list.push([String(entry[0]), String(entry[1])]);
      }
    } else if (typeof init === 'object' && init !== null) {
      for (const name of Object.keys(init)) this.#list.push([name, String(init[name])]);
    } else {
      this.#list = parseQuery(String(init));
    }
  }
  // URL's access, private to this file.
  static {
    ownParams = (params, url) => { params.#owner = url; };
    resetParams = (params, query) => { params.#list = parseQuery(query); };
  }
  #changed() { if (this.#owner !== null) queryChanged(this.#owner, this.toString()); }
  get size() { return this.#list.length; }
  append(name, value) { this.#list.push([String(name), String(value)]); this.#changed(); }
  delete(name, value) {
    this.#list = this.#list.filter(([k, v]) => k !== String(name) || (value !== undefined && v !== String(value)));
    this.#changed();
  }
  get(name) { const e = this.#list.find(([k]) => k === String(name)); return e ? e[1] : null; }
  getAll(name) { return this.#list.filter(([k]) => k === String(name)).map(([, v]) => v); }
  has(name, value) { return this.#list.some(([k, v]) => k === String(name) && (value === undefined || v === String(value))); }
  set(name, value) {
    const i = this.#list.findIndex(([k]) => k === String(name));
    if (i < 0) { this.append(name, value); return; }
    this.#list[i] = [String(name), String(value)];
    this.#list = this.#list.filter(([k], j) => j <= i || k !== String(name));
    this.#changed();
  }
  sort() { this.#list.sort((a, b) => a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0); this.#changed(); }
  forEach(callback, thisArg) { for (const [k, v] of this.#list) callback.call(thisArg, v, k, this); }
  *entries() { for (const [k, v] of this.#list) yield [k, v]; }
  *keys() { for (const [k] of this.#list) yield k; }
  *values() { for (const [, v] of this.#list) yield v; }
  [Symbol.iterator]() { return this.entries(); }
  toString() { return this.#list.map(([k, v]) => formEncode(k) + '=' + formEncode(v)).join('&'); }
}

// URLs with an authority (http, https, ws, wss, ftp, file and the like),
// absolute or relative to a base (/path, ?query, #hash, a/b, ../c), with the
// WHATWG URL standard's canonical forms for what these hold: lower-case scheme
// and host, default ports dropped, dot segments resolved, the percent-encode
// sets of path, query and fragment, and setters that canonicalize (as
// URLPattern relies on). No IDNA, no IPv6 or opaque-path URLs.
const defaultPorts = { 'http:': '80', 'https:': '443', 'ws:': '80', 'wss:': '443', 'ftp:': '21' };
const urlPattern = /^([a-zA-Z][a-zA-Z0-9+.-]*:)\/\/(?:([^/?#@]*)@)?([^/?#:]*)(?::([0-9]*))?([^?#]*)(\?[^#]*)?(#.*)?$/;
// One code point of an encode set as UTF-8 percent-escapes. The sets match
// whole code points (the u flag), so a surrogate pair is one character; a lone
// surrogate becomes U+FFFD's bytes, and "'" (which encodeURIComponent leaves
// alone) %27, as the special-query set wants.
const percentEncodeCodePoint = c => c === "'" ? '%27' : c.length === 1 && c >= '\ud800' && c <= '\udfff' ? '%EF%BF%BD' : encodeURIComponent(c);
const percentEncoder = pattern => text => pattern.test(text) ? text.replace(pattern, percentEncodeCodePoint) : text;
// The path, query and fragment percent-encode sets (ASCII part; non-ASCII is always encoded).
const encodePath = percentEncoder(/[\u0000-\u0020"#<>?`{}\u007f-\u{10ffff}]/gu);
const encodeQuery = percentEncoder(/[\u0000-\u0020"#<>'\u007f-\u{10ffff}]/gu);
const encodeFragment = percentEncoder(/[\u0000-\u0020"<>`\u007f-\u{10ffff}]/gu);
const encodeUserinfo = percentEncoder(/[\u0000-\u0020"#<>?`{}/:;=@[\\\]^|\u007f-\u{10ffff}]/gu);
// Regular expressions of the hot paths are made once: a literal in a function makes a RegExp per call.
const dotSegmentOrBackslash = /(^|\/)(\.|%2e){1,2}(\/|$)|\\/i;
const outerSpaces = /^[\u0000-\u0020]+|[\u0000-\u0020]+$/g;
const tabOrNewline = /[\t\n\r]/;
const tabsAndNewlines = /[\t\n\r]/g;
function normalizePath(path) {
  if (path === '') return '/';
  if (!dotSegmentOrBackslash.test(path)) return encodePath(path);
  const out = [];
  const segments = path.replace(/\\/g, '/').split('/').slice(1);
  segments.forEach((segment, i) => {
    const last = i === segments.length - 1;
    if (segment === '..' || segment.toLowerCase() === '%2e%2e') { out.pop(); if (last) out.push(''); }
    else if (segment === '.' || segment.toLowerCase() === '%2e') { if (last) out.push(''); }
    else out.push(segment);
  });
  return encodePath('/' + out.join('/'));
}
// An http(s) URL that its parse would give back unchanged as href: lower-case
// scheme and host, no userinfo, port or fragment, a path and query of
// characters no encode set touches, no dot segment (in path or query: a
// false alarm only costs the full parse). For a Request's url, which every
// request needs: most URLs are already so, and this needs no URL object.
const normalHttpUrl = /^https?:\/\/[a-z0-9.-]+\/[^\u0000-\u0020"#<>?`{}\\\u007f-\uffff]*(?:\?[^\u0000-\u0020"#<>'\u007f-\uffff]*)?$/;
const dotSegment = /(?:^|\/)(?:\.|%2e){1,2}(?:[\/?]|$)/i;
const hrefOf = text => normalHttpUrl.test(text) && !dotSegment.test(text) ? text : new URL(text).href;
const normalizePort = (protocol, port) => port === '' || defaultPorts[protocol] === String(Number(port)) ? '' : String(Number(port));

class URL {
  // #search and #hash keep a lone '?' or '#' (an empty query or fragment shows in href only).
  #protocol; #username = ''; #password = ''; #hostname; #port; #pathname; #search; #hash;
  #params = null;  // parsed on first use
  constructor(input, base) {
    this.#parse(String(input), base === undefined ? null : base instanceof URL ? base : new URL(base));
  }
  #parse(text, base) {
    if (text.charCodeAt(0) <= 0x20 || text.charCodeAt(text.length - 1) <= 0x20) {
      text = text.replace(outerSpaces, '');
    }
    if (tabOrNewline.test(text)) text = text.replace(tabsAndNewlines, '');
    if (normalHttpUrl.test(text) && !dotSegment.test(text)) {
      // Already normal (the URL a worker makes from request.url, mostly): the
      // parts are slices of it, without the match array of the full parse.
      const hostAt = text.charCodeAt(4) === 0x3a ? 7 : 8;
      const pathAt = text.indexOf('/', hostAt);
      const queryAt = text.indexOf('?', pathAt);
      this.#protocol = hostAt === 7 ? 'http:' : 'https:';
      this.#hostname = text.slice(hostAt, pathAt);
      this.#port = '';
      this.#pathname = queryAt < 0 ? text.slice(pathAt) : text.slice(pathAt, queryAt);
      this.#search = queryAt < 0 ? '' : text.slice(queryAt);
      this.#hash = '';
      return;
    }
    const m = urlPattern.exec(text);
    if (m !== null) {
      const protocol = m[1].toLowerCase();
      if (m[4] !== undefined && m[4] !== '' && Number(m[4]) > 65535) throw new TypeError('Invalid URL: ' + text);
      if (m[3] === '' && protocol !== 'file:') throw new TypeError('Invalid URL: ' + text);
      this.#protocol = protocol;
      if (m[2] !== undefined) {
        const colon = m[2].indexOf(':');
        this.#username = encodeUserinfo(colon < 0 ? m[2] : m[2].slice(0, colon));
        this.#password = colon < 0 ? '' : encodeUserinfo(m[2].slice(colon + 1));
      }
      this.#hostname = m[3].toLowerCase();
      this.#port = m[4] === undefined ? '' : normalizePort(protocol, m[4]);
      this.#pathname = normalizePath(m[5]);
      this.#search = m[6] === undefined ? '' : encodeQuery(m[6]);
      this.#hash = m[7] === undefined ? '' : encodeFragment(m[7]);
      return;
    }
    if (base === null || /^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(text)) throw new TypeError('Invalid URL: ' + text);
    this.#protocol = base.#protocol; this.#username = base.#username; this.#password = base.#password;
    this.#hostname = base.#hostname; this.#port = base.#port;
    if (text.startsWith('//')) { this.#parse(base.#protocol + text, null); return; }
    const hashAt = text.indexOf('#');
    const beforeHash = hashAt < 0 ? text : text.slice(0, hashAt);
    this.#hash = hashAt < 0 ? '' : encodeFragment(text.slice(hashAt));
    const queryAt = beforeHash.indexOf('?');
    const path = queryAt < 0 ? beforeHash : beforeHash.slice(0, queryAt);
    const query = queryAt < 0 ? null : beforeHash.slice(queryAt);
    if (path === '') {
      this.#pathname = base.#pathname;
      this.#search = query === null ? base.#search : encodeQuery(query);
      if (hashAt < 0 && query === null) this.#hash = '';
      return;
    }
    const dir = base.#pathname.slice(0, base.#pathname.lastIndexOf('/') + 1);
    this.#pathname = normalizePath(path.startsWith('/') || path.startsWith('\\') ? path : dir + path);
    this.#search = query === null ? '' : encodeQuery(query);
  }
  static canParse(input, base) {
    try { new URL(input, base); return true; } catch { return false; }
  }
  static parse(input, base) {
    try { return new URL(input, base); } catch { return null; }
  }
  // Blob URLs: workerd has none either, and says so in these words.
  static createObjectURL() { throw new Error('URL.createObjectURL() is not implemented'); }
  static revokeObjectURL() { throw new Error('URL.revokeObjectURL() is not implemented'); }
  get protocol() { return this.#protocol; }
  set protocol(value) {
    const m = /^([a-zA-Z][a-zA-Z0-9+.-]*)/.exec(String(value));
    if (m !== null) { this.#protocol = m[1].toLowerCase() + ':'; this.#port = normalizePort(this.#protocol, this.#port); }
  }
  get username() { return this.#username; }
  set username(value) { this.#username = encodeUserinfo(String(value)); }
  get password() { return this.#password; }
  set password(value) { this.#password = encodeUserinfo(String(value)); }
  get hostname() { return this.#hostname; }
  set hostname(value) {
    const host = String(value).split(/[:/?#\\]/)[0];
    if (host !== '') this.#hostname = host.toLowerCase();
  }
  get port() { return this.#port; }
  set port(value) {
    const digits = /^[0-9]*/.exec(String(value))[0];
    if (String(value) === '') this.#port = '';
    else if (digits !== '' && Number(digits) <= 65535) this.#port = normalizePort(this.#protocol, digits);
  }
  get host() { return this.#host(); }
  set host(value) {
    const m = /^([^:/?#\\]*)(?::([0-9]*))?/.exec(String(value));
    if (m[1] === '') return;
    this.#hostname = m[1].toLowerCase();
    if (m[2] !== undefined && m[2] !== '' && Number(m[2]) <= 65535) this.#port = normalizePort(this.#protocol, m[2]);
  }
  get pathname() { return this.#pathname; }
  set pathname(value) {
    const path = String(value);
    this.#pathname = normalizePath(path.startsWith('/') || path.startsWith('\\') ? path : '/' + path);
  }
  get search() { return this.#search === '?' ? '' : this.#search; }
  set search(value) {
    const text = String(value);
    this.#search = text === '' ? '' : encodeQuery(text.startsWith('?') ? text : '?' + text);
    if (this.#params !== null) resetParams(this.#params, this.#search);
  }
  get hash() { return this.#hash === '#' ? '' : this.#hash; }
  set hash(value) {
    const text = String(value);
    this.#hash = text === '' ? '' : encodeFragment(text.startsWith('#') ? text : '#' + text);
  }
  get searchParams() {
    if (this.#params === null) {
      this.#params = new URLSearchParams(this.#search);
      // The URL's query follows its searchParams' changes (no closure per URL).
      ownParams(this.#params, this);
    }
    return this.#params;
  }
  // For URLSearchParams (private to this file): the query of `url` after its searchParams changed.
  static { queryChanged = (url, text) => { url.#search = text === '' ? '' : '?' + text; }; }
  get origin() { return this.#protocol === 'file:' ? 'null' : this.#protocol + '//' + this.#host(); }
  #host() { return this.#port === '' ? this.#hostname : this.#hostname + ':' + this.#port; }
  #href() {
    const userinfo = this.#username === '' && this.#password === '' ? ''
      : this.#username + (this.#password === '' ? '' : ':' + this.#password) + '@';
    return this.#protocol + '//' + userinfo + this.#host() + this.#pathname + this.#search + this.#hash;
  }
  get href() { return this.#href(); }
  set href(value) {
    const parsed = new URL(value);
    this.#protocol = parsed.#protocol; this.#username = parsed.#username; this.#password = parsed.#password;
    this.#hostname = parsed.#hostname; this.#port = parsed.#port; this.#pathname = parsed.#pathname;
    this.#hash = parsed.#hash;
    this.search = parsed.#search;
  }
  toString() { return this.#href(); }
  toJSON() { return this.#href(); }
}

function formatArg(value) {
  if (typeof value === 'string') return value;
  if (value instanceof Error) return value.stack || String(value);
  if (typeof value === 'object' && value !== null) {
    try { return JSON.stringify(value); } catch { return Object.prototype.toString.call(value); }
  }
  return String(value);
}
// The counters and timers of console.count and console.time, by label.
const consoleCounts = new Map();
const consoleTimers = new Map();
let consoleIndent = '';  // console.group's
const consoleLine = (level, args) => consoleWrite(level, consoleIndent + args.map(formatArg).join(' '));
const consoleMethod = level => (...args) => consoleLine(level, args);
// The methods of V8's console (workerd's), with V8's wording; times are the
// runtime's virtual clock (performance.now).
const console = {
  log: consoleMethod('log'), info: consoleMethod('info'), debug: consoleMethod('debug'),
  warn: consoleMethod('warn'), error: consoleMethod('error'),
  dir: consoleMethod('log'), dirxml: consoleMethod('log'), table: consoleMethod('log'),
  trace(...args) { consoleLine('log', ['Trace' + (args.length > 0 ? ': ' + args.map(formatArg).join(' ') : ''), new Error().stack.replace(/^[^\n]*\n/, '')]); },
  assert(condition, ...args) { if (!condition) consoleLine('error', ['Assertion failed' + (args.length > 0 ? ':' : ''), ...args]); },
  count(label = 'default') {
    const n = (consoleCounts.get(String(label)) || 0) + 1;
    consoleCounts.set(String(label), n);
    consoleLine('info', [`${label}: ${n}`]);
  },
  countReset(label = 'default') { consoleCounts.delete(String(label)); },
  time(label = 'default') { consoleTimers.set(String(label), virtualNow); },
  timeLog(label = 'default', ...args) {
    if (!consoleTimers.has(String(label))) { consoleLine('warn', [`Timer '${label}' does not exist`]); return; }
    consoleLine('info', [`${label}: ${virtualNow - consoleTimers.get(String(label))} ms`, ...args]);
  },
  timeEnd(label = 'default') { console.timeLog(label); consoleTimers.delete(String(label)); },
  group(...args) { if (args.length > 0) consoleLine('log', args); consoleIndent += '  '; },
  groupCollapsed(...args) { console.group(...args); },
  groupEnd() { consoleIndent = consoleIndent.slice(2); },
  // What only DevTools shows: nothing to do without an inspector, as in V8.
  clear() {}, profile() {}, profileEnd() {}, timeStamp() {},
};
Object.defineProperty(console, Symbol.toStringTag, { value: 'console', configurable: true });

// Timers on virtual time: a timer fires once microtasks are drained and no
// earlier timer is due; nothing waits for real time to pass. As on the
// platform, performance.now() does not advance while code runs: it moves
// only when a timer fires.
let virtualNow = 0;
let nextTimerId = 0;
const timers = new Map();
function addTimer(callback, delay, args, repeat) {
  if (typeof callback !== 'function') throw new TypeError('a timer callback must be a function');
  const id = ++nextTimerId;
  const ms = Math.max(0, Number(delay) || 0);
  // The AsyncLocalStorage frame it was scheduled in (node:async_hooks) is
  // the one it runs in, as in workerd.
  timers.set(id, { due: virtualNow + ms, callback, args, repeat: repeat ? Math.max(1, ms) : 0, frame: getAsyncFrame() });
  return id;
}
const setTimeout = (callback, delay = 0, ...args) => addTimer(callback, delay, args, false);
const setInterval = (callback, delay = 0, ...args) => addTimer(callback, delay, args, true);
function clearTimeout(id) { timers.delete(id); }
const clearInterval = clearTimeout;
function runNextTimer() {
  let bestId = 0, best = null;
  for (const [id, timer] of timers) if (best === null || timer.due < best.due) { bestId = id; best = timer; }
  if (best === null) return false;
  if (best.repeat) best.due += best.repeat;
  else timers.delete(bestId);
  virtualNow = Math.max(virtualNow, best.due - best.repeat);
  const saved = getAsyncFrame();
  setAsyncFrame(best.frame);
  try {
    best.callback(...best.args);
  } finally {
    setAsyncFrame(saved);
  }
  return true;
}
// performance and scheduler as workerd has them: an instance of a class a
// worker never sees as a global.
class Performance {
  constructor(token) { illegalConstructor(token); }
  get timeOrigin() { return 0; }
  now() { return virtualNow; }
}
const performance = new Performance(runtimeToken);
class Scheduler {
  constructor(token) { illegalConstructor(token); }
  wait(ms) { return new Promise(resolve => setTimeout(resolve, ms)); }
}
// navigator's fields are the instance's own, as in workerd. Libraries detect
// Workers by navigator.userAgent (Hono's getRuntimeKey does).
class Navigator {
  constructor(token) {
    illegalConstructor(token);
    this.platform = '';
    this.hardwareConcurrency = 1;
    this.userAgent = 'Cloudflare-Workers';
    Object.freeze(this);
  }
}
const queueMicrotask = callback => { Promise.resolve().then(callback); };

// ---- subrequests and caches ----

// Subrequests go to the user's --fetch-handler module (setFetchHandler), if any.
let subrequests = null;  // { receiver, fetch, filename }
async function fetch(input, init) {
  if (subrequests === null) {
    const url = input instanceof Request ? input.url : String(input);
    throw new TypeError('fetch(' + JSON.stringify(url) + '): heapprof\'s runtime has no network; ' +
      'the worker\'s subrequests are refused (answer them with --fetch-handler FILE)');
  }
  const request = new Request(input, init);
  const response = await subrequests.fetch.call(subrequests.receiver, request);
  if (!(response instanceof Response)) {
    throw new TypeError('fetch(' + JSON.stringify(request.url) + '): the --fetch-handler ' + subrequests.filename +
      ' answered ' + (response === null ? 'null' : typeof response) + ' instead of a Response');
  }
  return response;
}
// The Cache API, in memory for this isolate: put() stores a copy, match()
// returns a copy. Honest about what it is: nothing leaves the isolate.
class Cache {
  #entries = new Map();
  constructor(token) { illegalConstructor(token); }
  #key(request) { return request instanceof Request ? request.url : new URL(String(request)).href; }
  async match(request) {
    const entry = this.#entries.get(this.#key(request));
    return entry === undefined ? undefined : entry.clone();
  }
  async put(request, response) {
    if (!(response instanceof Response)) throw new TypeError('Cache.put needs a Response');
    this.#entries.set(this.#key(request), response.clone());
  }
  async delete(request) { return this.#entries.delete(this.#key(request)); }
}
// What workerd's caches do not implement, refused with workerd's words (a
// throw, not a rejected promise, as there).
const notImplemented = (on, method) => function () {
  throw new Error(`Failed to execute '${method}' on '${on}': the method is not implemented.`);
};
for (const method of ['add', 'addAll', 'keys', 'matchAll']) {
  Object.defineProperty(Cache.prototype, method, { value: notImplemented('Cache', method), writable: true, configurable: true });
}
class CacheStorage {
  #named = new Map();
  default = new Cache(runtimeToken);
  constructor(token) { illegalConstructor(token); }
  async open(name) {
    if (!this.#named.has(name)) this.#named.set(name, new Cache(runtimeToken));
    return this.#named.get(name);
  }
}
for (const method of ['delete', 'has', 'keys', 'match']) {
  Object.defineProperty(CacheStorage.prototype, method, { value: notImplemented('CacheStorage', method), writable: true, configurable: true });
}
const caches = new CacheStorage(runtimeToken);

// A KV namespace binding, in memory for this isolate (values are strings or
// bytes; expiration and consistency are not modelled).
class KVNamespace {
  #map = new Map();  // key -> { value: string | Uint8Array, metadata }
  constructor(entries) { for (let i = 0; i < entries.length; i += 2) this.#map.set(entries[i], { value: entries[i + 1], metadata: null }); }
  static #type(options) { return (typeof options === 'string' ? options : options && options.type) || 'text'; }
  static #decode(value, type) {
    switch (type) {
      case 'text': return typeof value === 'string' ? value : utf8Decode(value);
      case 'json': return JSON.parse(typeof value === 'string' ? value : utf8Decode(value));
      case 'arrayBuffer': return toArrayBuffer(typeof value === 'string' ? utf8Encode(value) : value);
      default: throw new TypeError('heapprof\'s KV supports the types text, json and arrayBuffer, not ' + type);
    }
  }
  async get(key, options) {
    const entry = this.#map.get(String(key));
    return entry === undefined ? null : KVNamespace.#decode(entry.value, KVNamespace.#type(options));
  }
  async getWithMetadata(key, options) {
    const entry = this.#map.get(String(key));
    if (entry === undefined) return { value: null, metadata: null };
    return { value: KVNamespace.#decode(entry.value, KVNamespace.#type(options)), metadata: entry.metadata };
  }
  async put(key, value, options = {}) {
    const stored = typeof value === 'string' ? value : copyBytes(value);
    if (stored === null) throw new TypeError('KV put() takes a string, an ArrayBuffer or an ArrayBufferView');
    this.#map.set(String(key), { value: stored, metadata: options.metadata === undefined ? null : structuredClone(options.metadata) });
  }
  async delete(key) { this.#map.delete(String(key)); }
  async list(options = {}) {
    const prefix = options.prefix == null ? '' : String(options.prefix);
    const limit = Math.min(1000, Math.max(1, Number(options.limit) || 1000));
    const names = [...this.#map.keys()].filter(k => k.startsWith(prefix)).sort();
    const start = options.cursor ? Number(options.cursor) || 0 : 0;
    const page = names.slice(start, start + limit);
    const complete = start + limit >= names.length;
    const keys = page.map(name => {
      const metadata = this.#map.get(name).metadata;
      return metadata === null ? { name } : { name, metadata };
    });
    return complete ? { keys, list_complete: true, cacheStatus: null } : { keys, list_complete: false, cursor: String(start + limit), cacheStatus: null };
  }
}

// In workerd these getters are C++ and answer a new string at every call.
// Here they are JavaScript, and what they answer is often a slice of the
// parsed input or of a bigger string (V8 makes substrings of 13 characters
// or more views into their parent), so a worker keeping url.pathname would
// keep the whole URL alive, charged to the runtime's parser. ownStrings puts
// each behind a native function that answers a flat copy of its own, made
// outside any runtime frame: a kept string holds only itself and is charged
// to the worker code that asked for it, as in workerd.
function ownStringsOf(proto, names) {
  for (const name of names) {
    const d = Object.getOwnPropertyDescriptor(proto, name);
    if (d.get !== undefined) d.get = ownStrings(d.get, 'get ' + name);
    else d.value = ownStrings(d.value, name);
    Object.defineProperty(proto, name, d);
  }
}
ownStringsOf(URL.prototype, ['href', 'origin', 'protocol', 'username', 'password', 'host', 'hostname', 'port',
  'pathname', 'search', 'hash', 'toString', 'toJSON']);
ownStringsOf(URLSearchParams.prototype, ['get']);
ownStringsOf(Request.prototype, ['url']);
ownStringsOf(Headers.prototype, ['get']);

// ---- HTMLRewriter and the APIs this runtime lacks ----

// HTMLRewriter with workerd's API over lol-html, workerd's own rewriter,
// compiled to WebAssembly (html-rewriter-wasm). Its script and module are
// run and compiled at the first HTMLRewriter use in the isolate, not at
// start-up: a worker that never rewrites HTML pays nothing for them.
let rewriterEngine = null;
function htmlRewriterModule() {
  if (rewriterEngine === null) {
    const load = natives.htmlRewriterEngine();  // runs the engine's script (heapprof/runtime/js/html_rewriter.js)
    rewriterEngine = load({ wasmBytes: natives.htmlRewriterWasm, TextDecoder, TextEncoder });
  }
  return rewriterEngine;
}
// [name, function, receiver] of each handler `handlers` has, read when it is
// registered (as workerd does) and called with `handlers` as `this`.
function handlerFunctions(handlers, names) {
  if (handlers === null || typeof handlers !== 'object' && typeof handlers !== 'function') {
    throw new TypeError('HTMLRewriter handlers must be an object');
  }
  const functions = [];
  for (const name of names) {
    const handler = handlers[name];
    if (handler === undefined) continue;
    if (typeof handler !== 'function') throw new TypeError('HTMLRewriter handler ' + name + ' is not a function');
    functions.push([name, handler, handlers]);
  }
  return functions;
}
class HTMLRewriter {
  #handlers = [];  // [selector, handlerFunctions(...)], a null selector for onDocument
  on(selector, handlers) {
    selector = String(selector);
    // lol-html parses the selector here, as workerd does: a bad one throws from on().
    const probe = new (htmlRewriterModule().HTMLRewriter)(() => {});
    try { probe.on(selector, {}); } finally { probe.free(); }
    this.#handlers.push([selector, handlerFunctions(handlers, ['element', 'comments', 'text'])]);
    return this;
  }
  onDocument(handlers) {
    this.#handlers.push([null, handlerFunctions(handlers, ['doctype', 'comments', 'text', 'end'])]);
    return this;
  }
  // A Response like `response` whose body is `response`'s rewritten while it
  // is read: each chunk read from the source goes through lol-html (handlers,
  // async ones too, run then), and what lol-html has written is the next
  // chunk. An error of a handler or of the source errors the body.
  transform(response) {
    if (!(response instanceof Response)) {
      throw new TypeError("Failed to execute 'transform' on 'HTMLRewriter': parameter 1 is not of type 'Response'.");
    }
    const source = response.body;
    if (source === null) return new Response(null, response);
    const reader = source.getReader();
    const { HTMLRewriter: Engine } = htmlRewriterModule();
    let written = [];
    let rewriter = new Engine(chunk => written.push(chunk));
    const release = () => { if (rewriter !== null) { rewriter.free(); rewriter = null; } };
    // A rejected promise must not reach the engine: its asyncify glue would
    // leave the rewriter suspended mid-write, never to be freed. A rejection
    // is kept instead, the handlers after it are skipped, and the write
    // fails with it (a handler that throws at once fails the write itself).
    let failure = null;
    const guard = ([name, handler, receiver]) => [name, item => {
      if (failure !== null) return undefined;
      const result = handler.call(receiver, item);
      if (result === null || (typeof result !== 'object' && typeof result !== 'function') || typeof result.then !== 'function') return result;
      return Promise.resolve(result).then(() => {}, error => { if (failure === null) failure = { error }; });
    }];
    try {
      for (const [selector, functions] of this.#handlers) {
        const handlers = Object.fromEntries(functions.map(guard));
        if (selector === null) rewriter.onDocument(handlers);
        else rewriter.on(selector, handlers);
      }
    } catch (error) {
      release();
      throw error;
    }
    let ended = false;
    const body = new ReadableStream({
      async pull(controller) {
        try {
          while (written.length === 0 && !ended) {
            const { done, value } = await reader.read();
            if (done) {
              await rewriter.end();
              ended = true;
            } else {
              const bytes = viewBytes(value, 'a chunk of the body HTMLRewriter transforms');
              if (bytes.length > 0) await rewriter.write(bytes);
            }
            if (failure !== null) throw failure.error;
          }
        } catch (error) {
          // The error to report is the handler's or the source's, not one of
          // freeing an engine rewriter that the error left mid-write.
          try { release(); } catch { rewriter = null; }
          reader.cancel(error).catch(() => {});
          throw error;
        }
        const chunks = written;
        written = [];
        for (const chunk of chunks) controller.enqueue(chunk);
        if (ended) {
          release();
          controller.close();
        }
      },
      cancel(reason) {
        release();
        return reader.cancel(reason);
      },
    }, { highWaterMark: 0 });
    return new Response(body, response);
  }
}

// What workerd offers and this runtime does not: using it throws an Error
// that says so (counted as the request's failure, its message in the run's
// outcome) instead of a ReferenceError that reads like a bug of the worker.
// docs/runtime.md lists them.
function missingApi(what) {
  return new Error(what + " is not available in heapprof's embedded runtime; " +
                   'profile this worker in workerd with --runtime workerd');
}
// A class, so that `typeof X` and `instanceof X` answer as in workerd (and
// libraries that look for it find it); constructing one throws.
function missingClass(name) {
  return { [name]: class { constructor() { throw missingApi(name); } } }[name];
}
// Globals of workerd's with no counterpart here. Installed first, so that a
// real implementation of one of them, once written, takes its place.
const missingGlobals = {
  WebSocketPair: missingClass('WebSocketPair'),
  WebSocket: missingClass('WebSocket'),
  EventSource: missingClass('EventSource'),
};
// A method of Navigator's, as workerd's navigator.sendBeacon is.
Object.defineProperty(Navigator.prototype, 'sendBeacon', {
  value: { sendBeacon() { throw missingApi('navigator.sendBeacon'); } }.sendBeacon,
  writable: true, configurable: true,
});

// ---- nodejs_compat and cloudflare:workers ----

// The node: modules (heapprof/runtime/js/node.js), a script of their own run at
// the worker's first import of one (natives.nodeLibraries): a worker that
// imports none carries neither their source nor their objects.
let nodeModules = null;
function nodeModule(name) {
  if (nodeModules === null) {
    const load = natives.nodeLibraries();
    nodeModules = load({
      natives, missingApi, getFrame: getAsyncFrame, setFrame: setAsyncFrame,
      TextEncoder, TextDecoder, URL, URLSearchParams, Blob, File, atob, btoa, crypto, CryptoKey,
      processEnv: () => ({ ...processEnv }),
      builtinModule(specifier) {
        const exports = nodeModuleFor(specifier);
        return exports === null ? undefined : exports.default;
      },
    });
  }
  return nodeModules(name);
}
// The exports of an import specifier, under the flags: node:NAME, or NAME
// alone (nodejs_compat accepts both); null when the runtime has no such
// module or the flags do not offer it (nodejs_als: node:async_hooks only).
function nodeModuleFor(specifier) {
  const name = specifier.startsWith('node:') ? specifier.slice(5) : specifier;
  if (!options.nodejsCompat && !(options.nodejsAls && name === 'async_hooks')) return null;
  return nodeModule(name);
}
// process.env's vars (nodejs_compat_populate_process_env): makeEnv fills it.
const processEnv = {};
function setImmediate(callback, ...args) { return addTimer(callback, 0, args, false); }
// The globals nodejs_compat adds, as in workerd: Buffer and process are
// made at their first use (a lazy data property), like the modules.
function installNodeGlobals() {
  Object.defineProperties(globalThis, {
    global: { value: globalThis, writable: true, configurable: true, enumerable: true },
    setImmediate: { value: setImmediate, writable: true, configurable: true, enumerable: true },
    clearImmediate: { value: clearTimeout, writable: true, configurable: true, enumerable: true },
  });
  natives.lazyGlobal('Buffer', () => nodeModule('buffer').Buffer);
  natives.lazyGlobal('process', () => nodeModule('process').default);
}

// cloudflare:workers: the classes a worker extends, env, waitUntil. The
// rest of workerd's module (RPC stubs, Workflows, withEnv, ...) refuses to
// be used. Made at the first import; like workerd's, it has no default export.
class WorkerEntrypoint {
  constructor(ctx, env) { this.ctx = ctx; this.env = env; }
}
class DurableObject {
  constructor(ctx, env) { this.ctx = ctx; this.env = env; }
}
class RpcTarget {}
let currentWaits = null;  // the waitUntil list of the request being dispatched
let cloudflareWorkers = null;
function cloudflareWorkersModule(env) {
  if (cloudflareWorkers === null) {
    const refuse = name => ({ [name]() { throw missingApi('cloudflare:workers ' + name + '()'); } })[name];
    cloudflareWorkers = {
      WorkerEntrypoint, DurableObject, RpcTarget, env,
      waitUntil(promise) {
        if (currentWaits === null) throw new Error('waitUntil() can only be called while a request is being handled');
        currentWaits.push(Promise.resolve(promise));
      },
      RpcStub: missingClass('RpcStub'), RpcPromise: missingClass('RpcPromise'), RpcProperty: missingClass('RpcProperty'),
      ServiceStub: missingClass('ServiceStub'), WorkflowEntrypoint: missingClass('WorkflowEntrypoint'),
      abortIsolate: refuse('abortIsolate'), withEnv: refuse('withEnv'), withExports: refuse('withExports'),
      withEnvAndExports: refuse('withEnvAndExports'),
    };
  }
  return cloudflareWorkers;
}
// The fetch of a default export that is a class extending WorkerEntrypoint:
// an instance per request, made with (ctx, env), as workerd does; null for
// any other default export.
function entrypointFetch(handler) {
  if (typeof handler !== 'function' || !(handler.prototype instanceof WorkerEntrypoint)) return null;
  if (typeof handler.prototype.fetch !== 'function') return undefined;
  return function fetch(request, env, ctx) { return new handler(ctx, env).fetch(request); };
}

// ctx of fetch(request, env, ctx). Its methods live on the prototype, as
// workerd's do, rather than as two closures made for every request.
class ExecutionContext {
  #waits;
  constructor(waits) { this.#waits = waits; }
  waitUntil(promise) { this.#waits.push(Promise.resolve(promise)); }
  passThroughOnException() {}
}

const fetchListeners = [];
const errorListeners = [];  // the global 'error' event's, for reportError
const listenersOf = type => type === 'fetch' ? fetchListeners : type === 'error' ? errorListeners : null;
function removeEventListener(type, listener) {
  const list = listenersOf(type);
  const at = list === null ? -1 : list.indexOf(listener);
  if (at >= 0) list.splice(at, 1);
}
function addEventListener(type, listener) {
  const list = listenersOf(type);
  if (list !== null && typeof listener === 'function') list.push(listener);
}
// reportError(error): an ErrorEvent to the global 'error' listeners, as in
// workerd; with none, the error goes to the console as uncaught.
function reportError(error) {
  const message = 'Uncaught ' + (error instanceof Error ? error.name + ': ' + error.message : String(error));
  const event = new ErrorEvent('error', { message, error, cancelable: true });
  if (errorListeners.length === 0) {
    console.error(message);
    return;
  }
  for (const listener of errorListeners.slice()) listener.call(globalThis, event);
}

// Byte streams of workerd's own: a TransformStream that passes bytes
// through (strings as UTF-8), FixedLengthStream's checking their count.
function byteTransform(expected) {
  let seen = 0;
  return new TransformStream({
    transform(chunk, controller) {
      const bytes = typeof chunk === 'string' ? utf8Encode(chunk) : copyBytes(viewBytes(chunk, 'a chunk written to the stream'));
      if (expected !== null && seen + bytes.length > expected) {
        throw new TypeError('Attempt to write too many bytes through a FixedLengthStream.');
      }
      seen += bytes.length;
      controller.enqueue(bytes);
    },
    flush() {
      if (expected !== null && seen < expected) throw new TypeError('FixedLengthStream did not see all expected bytes before close().');
    },
  });
}
class IdentityTransformStream {
  #stream;
  constructor() { this.#stream = byteTransform(null); }
  get readable() { return this.#stream.readable; }
  get writable() { return this.#stream.writable; }
}
class FixedLengthStream {
  #stream;
  constructor(expectedLength) {
    const n = Number(expectedLength);
    if (n < 0) throw new TypeError('The value cannot be converted because it is negative and this API expects a positive bigint.');
    if (!Number.isFinite(n)) throw new TypeError('FixedLengthStream requires an integer expected length.');
    this.#stream = byteTransform(Math.trunc(n));
  }
  get readable() { return this.#stream.readable; }
  get writable() { return this.#stream.writable; }
}
// crypto.DigestStream: a WritableStream whose `digest` resolves to the hash
// of the bytes written (OpenSSL, at close).
class DigestStream extends WritableStream {
  #digest; #bytesWritten = 0;
  constructor(algorithm) {
    const name = hashNames.get(String(algorithmName(algorithm)).toLowerCase());
    if (name === undefined) throw new DOMException('Unrecognized or unimplemented digest algorithm requested.', 'NotSupportedError');
    const chunks = [];
    let settle;
    const digest = new Promise((resolve, reject) => { settle = { resolve, reject }; });
    let self = null;
    super({
      write(chunk) {
        const bytes = typeof chunk === 'string' ? utf8Encode(chunk) : copyBytes(viewBytes(chunk, 'a chunk written to a DigestStream'));
        chunks.push(bytes);
        if (self !== null) self.#bytesWritten += bytes.length;
      },
      close() {
        const all = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
        let at = 0;
        for (const c of chunks) { all.set(c, at); at += c.length; }
        settle.resolve(nativeDigest(name, all));
      },
      abort(reason) { settle.reject(reason); },
    });
    self = this;
    this.#digest = digest;
  }
  get digest() { return this.#digest; }
  get bytesWritten() { return this.#bytesWritten; }
}
Object.defineProperty(Crypto.prototype, 'DigestStream', { value: DigestStream, writable: true, configurable: true });

Object.assign(globalThis, {
  ...missingGlobals,
  Headers, Request, Response, URL, URLSearchParams, Blob, File, FormData,
  ...webLibraries, HTMLRewriter, TextEncoderStream, TextDecoderStream, CompressionStream, DecompressionStream,
  TextEncoder, TextDecoder, atob, btoa, structuredClone, crypto, CryptoKey,
  Event, CustomEvent, ErrorEvent, MessageEvent, CloseEvent, ExtendableEvent, FetchEvent, EventTarget, AbortController, AbortSignal, DOMException,
  navigator: new Navigator(runtimeToken), scheduler: new Scheduler(runtimeToken),
  Crypto, SubtleCrypto, Navigator, Cache, CacheStorage, self: globalThis,
  origin: 'null',  // a worker's origin is opaque, as in workerd
  console, performance, setTimeout, clearTimeout, setInterval, clearInterval, queueMicrotask,
  fetch, caches, addEventListener, removeEventListener, reportError, IdentityTransformStream, FixedLengthStream,
});
if (options.nodejsCompat) installNodeGlobals();
// Not in workerd, so a worker that relies on them would not run there.
delete globalThis.WeakRef;
delete globalThis.FinalizationRegistry;

// Made for a worker with Durable Object bindings only (makeEnv).
let durableObjectsRuntime = null;
const durableObjects = () => durableObjectsRuntime ??= makeDurableObjects({
  DurableObject, Request, Response, structuredClone, hmac: nativeHmac, digest: nativeDigest, randomFill, utf8Encode,
  defer: callback => addTimer(callback, 0, [], false), missingApi,
});

return {
  subrequestFetch: fetch,
  setDurableObjectExports: (exports, env) => durableObjects().setExports(exports, env),
  durableObjectsReport: () => durableObjects().describe(),
  setFetchHandler(receiver, handler, filename) { subrequests = { receiver, fetch: handler, filename }; },
  // The env of fetch(request, env, ctx): vars given as JSON texts, KV
  // namespaces as [binding, [key, value, ...]] pairs, Durable Object
  // namespaces as [binding, class, unique key, sqlite] (js/durable_objects.js).
  makeEnv(varNames, varJson, kvBindings, kvEntries, objectBindings) {
    const env = {};
    for (const [binding, className, key, sqlite] of objectBindings) env[binding] = durableObjects().makeNamespace(binding, className, key, sqlite);
    for (let i = 0; i < varNames.length; i++) env[varNames[i]] = JSON.parse(varJson[i]);
    for (let i = 0; i < kvBindings.length; i++) env[kvBindings[i]] = new KVNamespace(kvEntries[i]);
    if (options.populateProcessEnv) {
      for (const name of varNames) if (typeof env[name] === 'string') processEnv[name] = env[name];
    }
    return env;
  },
  nodeModule: nodeModuleFor,
  cloudflareWorkersModule,
  entrypointFetch,
  fetchListeners,
  runNextTimer,
  // The Request of the request the host is dispatching (natives.requestParts).
  // Every request pays for what is made here, while workerd makes it in C++
  // off the V8 heap: the header list from requestParts becomes the Headers'
  // own list (checked in place), and hostInit is reused.
  makeRequest() {
    const parts = requestParts();
    const list = parts[2];
    for (let i = 0; i < list.length; i += 2) {
      list[i] = headerName(list[i]);
      list[i + 1] = headerValue(list[i + 1]);
    }
    const headers = adoptHeaders(list);
    hostInit.method = parts[0];
    hostInit.headers = headers;
    // A body that arrives over HTTP has the type its sender gave it, or none.
    hostInit.body = parts[3] === '' ? null : parts[3];
    hostInit.cf = cfFor(headers.get('cf-ipcountry'));
    let request;
    try {
      // redirect: 'manual', as on a request the platform hands a worker.
      request = new Request(parts[1], hostInit);
    } finally {
      hostInit.headers = hostInit.body = null;
    }
    makeHeadersImmutable(headers);  // new Request(request) gives a mutable copy, as in workerd
    return request;
  },
  // [status, statusText, [name, value, ...], body (string or Uint8Array)] of
  // what a handler returned, for the host; a promise of it when the body is a
  // stream (no promise on the common path).
  readResponse(response) {
    if (!(response instanceof Response)) {
      throw new TypeError('the fetch handler returned ' +
        (response === null ? 'null' : typeof response === 'object' ? 'an object that is not a Response' : typeof response) +
        ' instead of a Response');
    }
    const parts = [response.status, response.statusText, flattenHeaders(response.headers), ''];
    const body = bodyContent(response);
    if (body instanceof Promise) return body.then(bytes => { parts[3] = bytes; return parts; });
    if (body !== null) parts[3] = body;
    return parts;
  },
  // ctx for fetch(request, env, ctx); the array collects waitUntil promises.
  makeContext() {
    const waits = [];
    currentWaits = waits;
    return [new ExecutionContext(waits), waits];
  },
  // A FetchEvent for service-worker style scripts; state.response is set by respondWith.
  makeFetchEvent(request, ctx) {
    const state = { response: undefined, responded: false };
    return [new FetchEvent(runtimeToken, request, ctx, state), state];
  },
};
})
