// Blob and File.

import { bytesStream } from './streams.js';
import { copyBytes, toArrayBuffer } from './bytes.js';
import { lazyClasses, utf8Decode, utf8Encode } from './host.js';

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

lazyClasses.Blob = Blob;

export { blobBytes, Blob, File };
