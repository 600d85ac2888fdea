// workerd's own streams: IdentityTransformStream, FixedLengthStream,
// crypto.DigestStream.

import { DOMException } from './dom_exception.js';
import { natives, once, utf8Encode, webLibraries } from './host.js';
import { copyBytes, viewBytes } from './bytes.js';
// Imported, not require()d: this module is itself loaded at first use, and a
// require() target would keep a getter for each of its exports from the start.
import { algorithmName, hashNames } from './crypto/algorithms.js';
const { digest: nativeDigest } = natives;

// Byte streams of workerd's own: a TransformStream that passes bytes
// through (strings as UTF-8), FixedLengthStream's checking their count.
function byteTransform(expected) {
  let seen = 0;
  const { TransformStream } = webLibraries();
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
// of the bytes written (OpenSSL, at close); made with the streams library at
// its first use.
const digestStream = once(() => {
const { WritableStream } = webLibraries();
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
return DigestStream;
});

export { IdentityTransformStream, FixedLengthStream, digestStream };
