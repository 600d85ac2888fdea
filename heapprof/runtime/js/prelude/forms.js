// FormData and multipart/form-data bodies.

import { Blob, File, blobBytes } from './blob.js';
import { lazyClasses, natives, utf8Decode, utf8Encode } from './host.js';
const { randomFill } = natives;

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

lazyClasses.FormData = FormData;

export { FormData, multipartBoundary, parseMultipart, serializeMultipart };
