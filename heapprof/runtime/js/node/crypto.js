// node:crypto over the OpenSSL the runtime links (the natives the Web
// Crypto API uses): createHash, createHmac, randomBytes, randomInt,
// randomUUID, randomFillSync, timingSafeEqual, pbkdf2Sync, getHashes,
// getRandomValues, webcrypto and subtle. Hash and Hmac gather the data and
// hash it once at digest(). What workerd has beyond this (ciphers, keys,
// signing, Diffie-Hellman, X509) is refused.
export function makeCrypto(host) {
  const { Buffer } = host.buffer();
  const { natives, crypto: webcrypto } = host;
  const hashes = new Map([['md5', 'MD5'], ['sha1', 'SHA-1'], ['sha256', 'SHA-256'], ['sha384', 'SHA-384'], ['sha512', 'SHA-512'],
    ['rsa-md5', 'MD5'], ['rsa-sha1', 'SHA-1'], ['rsa-sha256', 'SHA-256'], ['rsa-sha384', 'SHA-384'], ['rsa-sha512', 'SHA-512'],
    ['sha-1', 'SHA-1'], ['sha-256', 'SHA-256'], ['sha-384', 'SHA-384'], ['sha-512', 'SHA-512']]);
  const hashName = algorithm => {
    const name = typeof algorithm === 'string' ? hashes.get(algorithm.toLowerCase()) : undefined;
    if (name === undefined) {
      if (typeof algorithm !== 'string') throw new TypeError('The "algorithm" argument must be of type string');
      throw new Error('Digest method not supported');
    }
    return name;
  };
  const toBytes = (data, encoding, what) => {
    if (typeof data === 'string') return Buffer.from(data, encoding === undefined || encoding === 'buffer' ? 'utf8' : encoding);
    if (ArrayBuffer.isView(data)) return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    if (data instanceof ArrayBuffer) return new Uint8Array(data);
    throw new TypeError('The "' + what + '" argument must be of type string or an instance of Buffer, TypedArray, or DataView.');
  };
  const output = (bytes, encoding) => {
    const buffer = Buffer.from(bytes);
    return encoding === undefined || encoding === 'buffer' ? buffer : buffer.toString(encoding);
  };
  const concat = chunks => {
    const total = chunks.reduce((n, c) => n + c.length, 0);
    const all = new Uint8Array(total);
    let at = 0;
    for (const c of chunks) { all.set(c, at); at += c.length; }
    return all;
  };
  // Hash and Hmac: the data gathered, hashed once by OpenSSL at digest().
  class Digest {
    #name; #chunks = []; #done = false; #key;
    constructor(algorithm, key) { this.#name = hashName(algorithm); this.#key = key; }
    update(data, encoding) {
      if (this.#done) throw new Error('Digest already called');
      this.#chunks.push(toBytes(data, encoding, 'data').slice());
      return this;
    }
    digest(encoding) {
      if (this.#done) throw new Error('Digest already called');
      this.#done = true;
      const data = concat(this.#chunks);
      this.#chunks = [];
      const bytes = this.#key === undefined ? natives.digest(this.#name, data) : natives.hmac(this.#name, this.#key, data);
      return output(new Uint8Array(bytes), encoding);
    }
    copyInto(copy) {
      if (this.#done) throw new Error('Digest already called');
      for (const chunk of this.#chunks) copy.update(chunk);
      return copy;
    }
  }
  // update and digest on each class's own prototype, as Node's and workerd's are.
  class Hash extends Digest {
    #algorithm;
    constructor(algorithm) { super(algorithm); this.#algorithm = algorithm; }
    update(data, encoding) { return super.update(data, encoding); }
    digest(encoding) { return super.digest(encoding); }
    copy() { return this.copyInto(new Hash(this.#algorithm)); }
  }
  class Hmac extends Digest {
    constructor(algorithm, key, encoding) {
      super(algorithm, toBytes(key, encoding, 'key').slice());
    }
    update(data, encoding) { return super.update(data, encoding); }
    digest(encoding) { return super.digest(encoding); }
  }
  const createHash = algorithm => new Hash(algorithm);
  const createHmac = (algorithm, key, options) => new Hmac(algorithm, key, options && options.encoding);
  const hash = (algorithm, data, encoding = 'hex') => createHash(algorithm).update(data).digest(encoding);
  const checkSize = size => {
    if (typeof size !== 'number' || !Number.isInteger(size) || size < 0 || size > 2 ** 31 - 1) {
      throw new RangeError('The value of "size" is out of range. It must be >= 0 && <= 2147483647. Received ' + String(size));
    }
  };
  function randomFillSync(buffer, offset = 0, size) {
    const view = new Uint8Array(buffer.buffer || buffer, (buffer.byteOffset || 0) + offset, size === undefined ? (buffer.byteLength - offset) : size);
    for (let at = 0; at < view.length; at += 65536) natives.randomFill(view.subarray(at, Math.min(view.length, at + 65536)));
    return buffer;
  }
  function randomBytes(size, callback) {
    checkSize(size);
    const bytes = randomFillSync(Buffer.alloc(size));
    if (typeof callback === 'function') { queueMicrotask(() => callback(null, bytes)); return undefined; }
    return bytes;
  }
  function randomInt(min, max, callback) {
    if (typeof max === 'undefined' || typeof max === 'function') { callback = max; max = min; min = 0; }
    if (!Number.isSafeInteger(min) || !Number.isSafeInteger(max) || max <= min) {
      throw new RangeError('The value of "max" is out of range. It must be greater than the value of "min" (' + min + '). Received ' + max);
    }
    const range = max - min;
    const limit = 2 ** 48 - (2 ** 48 % range);
    let n;
    do {
      const b = randomFillSync(new Uint8Array(6));
      n = b[0] * 2 ** 40 + b[1] * 2 ** 32 + b[2] * 2 ** 24 + b[3] * 2 ** 16 + b[4] * 2 ** 8 + b[5];
    } while (n >= limit);
    const value = min + (n % range);
    if (typeof callback === 'function') { queueMicrotask(() => callback(null, value)); return undefined; }
    return value;
  }
  function pbkdf2Sync(password, salt, iterations, keylen, digest) {
    const bytes = natives.pbkdf2(hashName(digest), toBytes(password, undefined, 'password'), toBytes(salt, undefined, 'salt'), iterations, keylen);
    return Buffer.from(new Uint8Array(bytes));
  }
  function pbkdf2(password, salt, iterations, keylen, digest, callback) {
    const key = pbkdf2Sync(password, salt, iterations, keylen, digest);
    queueMicrotask(() => callback(null, key));
  }
  function timingSafeEqual(a, b) {
    const x = toBytes(a, undefined, 'buf1'), y = toBytes(b, undefined, 'buf2');
    if (x.byteLength !== y.byteLength) throw new TypeError('Input buffers must have the same byte length.');
    return natives.timingSafeEqual(x, y);
  }
  const refused = name => function () { throw host.missingApi('crypto.' + name + '()'); };
  const exports = {
    Hash, Hmac, createHash, createHmac, hash, randomBytes, randomFillSync, randomInt, pbkdf2, pbkdf2Sync, timingSafeEqual,
    randomFill(buffer, offset, size, callback) {
      callback = [offset, size, callback].find(f => typeof f === 'function');
      randomFillSync(buffer, typeof offset === 'number' ? offset : 0, typeof size === 'number' ? size : undefined);
      queueMicrotask(() => callback(null, buffer));
    },
    randomUUID: () => webcrypto.randomUUID(),
    getRandomValues: array => webcrypto.getRandomValues(array),
    getHashes: () => ['md5', 'sha1', 'sha256', 'sha384', 'sha512'],
    webcrypto, subtle: webcrypto.subtle, CryptoKey: host.CryptoKey,
    constants: {},
    createCipheriv: refused('createCipheriv'), createDecipheriv: refused('createDecipheriv'), createSign: refused('createSign'),
    createVerify: refused('createVerify'), createPrivateKey: refused('createPrivateKey'), createPublicKey: refused('createPublicKey'),
    createSecretKey: refused('createSecretKey'), generateKeyPairSync: refused('generateKeyPairSync'), generateKeyPair: refused('generateKeyPair'),
    createECDH: refused('createECDH'), createDiffieHellman: refused('createDiffieHellman'), sign: refused('sign'), verify: refused('verify'),
    scryptSync: refused('scryptSync'), scrypt: refused('scrypt'), hkdfSync: refused('hkdfSync'), hkdf: refused('hkdf'),
  };
  return exports;
}
