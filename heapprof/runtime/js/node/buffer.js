// node:buffer: Buffer from the npm package `buffer` (Node's Buffer API over
// Uint8Array), with what workerd's Buffer has beyond it: the base64url
// encoding, and the module's isAscii, isUtf8, atob, btoa, Blob, File,
// constants and kStringMaxLength. transcode is refused.
export function makeBuffer(host) {
  const pkg = require('buffer/');
  const { Buffer } = pkg;
  const isBase64url = encoding => typeof encoding === 'string' && encoding.toLowerCase() === 'base64url';
  const toBase64url = base64 => base64.replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  // base64-js, under the package's base64 decoder, reads - and _ too.
  const isEncoding = Buffer.isEncoding;
  Buffer.isEncoding = encoding => isBase64url(encoding) || isEncoding(encoding);
  const from = Buffer.from;
  Buffer.from = function (value, encodingOrOffset, length) {
    return from.call(this, value, isBase64url(encodingOrOffset) ? 'base64' : encodingOrOffset, length);
  };
  const byteLength = Buffer.byteLength;
  Buffer.byteLength = (value, encoding) => byteLength(value, isBase64url(encoding) ? 'base64' : encoding);
  const toString = Buffer.prototype.toString;
  Buffer.prototype.toString = function (encoding, start, end) {
    if (isBase64url(encoding)) return toBase64url(toString.call(this, 'base64', start, end));
    return toString.apply(this, arguments);
  };
  Buffer.prototype.toLocaleString = Buffer.prototype.toString;
  const write = Buffer.prototype.write;
  Buffer.prototype.write = function (string, offset, length, encoding) {
    const args = Array.from(arguments, a => isBase64url(a) ? 'base64' : a);
    return write.apply(this, args);
  };
  const fill = Buffer.prototype.fill;
  Buffer.prototype.fill = function (value, offset, end, encoding) {
    const args = Array.from(arguments, (a, i) => i > 0 && isBase64url(a) ? 'base64' : a);
    return fill.apply(this, args);
  };
  // Fixed-size reads check their offset with Node's (and workerd's) errors,
  // not the package's 'Trying to access beyond buffer length'.
  const readSizes = { 8: 1, 16: 2, 32: 4, 64: 8, Float: 4, Double: 8 };
  for (const name of Object.getOwnPropertyNames(Buffer.prototype)) {
    const m = /^read(?:Big)?(?:U?Int|Uint)?(8|16|32|64|Float|Double)(?:LE|BE)?$/.exec(name);
    if (m === null || typeof Buffer.prototype[name] !== 'function') continue;
    const size = readSizes[m[1]];
    const read = Buffer.prototype[name];
    Buffer.prototype[name] = {
      [name](offset = 0) {
        if (typeof offset !== 'number') {
          throw new TypeError('The "offset" argument must be of type number. Received ' +
            (offset === null ? 'null' : typeof offset === 'string' ? "type string ('" + offset + "')" : 'type ' + typeof offset));
        }
        if (!Number.isInteger(offset)) throw new RangeError('The value of "offset" is out of range. It must be an integer. Received ' + offset);
        if (this.length < size) throw new RangeError('Attempt to access memory outside buffer bounds');
        if (offset < 0 || offset > this.length - size) {
          throw new RangeError('The value of "offset" is out of range. It must be >= 0 and <= ' + (this.length - size) + '. Received ' + offset);
        }
        return read.call(this, offset);
      },
    }[name];
  }
  // Node's spellings the package lacks, and its own flag Node does not have.
  for (const [alias, name] of [['readBigUint64BE', 'readBigUInt64BE'], ['readBigUint64LE', 'readBigUInt64LE'],
    ['writeBigUint64BE', 'writeBigUInt64BE'], ['writeBigUint64LE', 'writeBigUInt64LE']]) {
    Object.defineProperty(Buffer.prototype, alias, { value: Buffer.prototype[name], writable: true, configurable: true });
  }
  Object.defineProperty(Buffer, 'of', { value: function of(...items) { return Buffer.from(items); }, writable: true, configurable: true });
  delete Buffer.TYPED_ARRAY_SUPPORT;
  const { TextDecoder } = host;
  const isUtf8 = input => {
    try {
      new TextDecoder('utf-8', { fatal: true }).decode(input);
      return true;
    } catch {
      return false;
    }
  };
  const isAscii = input => {
    const bytes = ArrayBuffer.isView(input) ? new Uint8Array(input.buffer, input.byteOffset, input.byteLength) : new Uint8Array(input);
    for (let i = 0; i < bytes.length; i++) if (bytes[i] > 0x7f) return false;
    return true;
  };
  const kStringMaxLength = (1 << 29) - 24;
  const exports = {
    Buffer, SlowBuffer: pkg.SlowBuffer, INSPECT_MAX_BYTES: pkg.INSPECT_MAX_BYTES, kMaxLength: pkg.kMaxLength,
    kStringMaxLength, constants: { MAX_LENGTH: pkg.kMaxLength, MAX_STRING_LENGTH: kStringMaxLength },
    atob: host.atob, btoa: host.btoa, Blob: host.Blob, File: host.File, isAscii, isUtf8,
    resolveObjectURL: () => undefined,
    transcode() { throw host.missingApi('buffer.transcode()'); },
  };
  return exports;
}
