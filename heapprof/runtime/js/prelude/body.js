// The body of a Request or a Response (Fetch's Body mixin).

import { isReadableStream, lazyClasses, loadApi, utf8Decode, utf8Encode } from './host.js';
import { bytesStream, isDisturbed, readAllBytes, takeUnread } from './streams.js';
import { copyBytes, toArrayBuffer } from './bytes.js';

// A body is held as what was given: a string, bytes (a private Uint8Array
// copy) or a ReadableStream. A string or bytes becomes a stream only when
// `.body` is asked for, so the common path allocates no stream.
// Returns the value and gives `headers` the body's content-type unless it has
// one (no {value, type} pair: this runs for every Request and Response).
// URLSearchParams, Blob and FormData are made at their first use (their
// modules set lazyClasses): before that no body can be one of them.
function extractBody(body, headers) {
  if (body == null) return null;
  if (typeof body === 'string') {
    // workerd reads a string body as the Request or Response is made, so V8
    // flattens a concatenated string there, under the caller's frames (a
    // page cache's entry is charged to the code that built it); read first
    // at the response's end, its flat copy would be charged to the runtime.
    if (body.length > 1) body.charCodeAt(0);
    return typedBody(body, 'text/plain;charset=UTF-8', headers);
  }
  const bytes = copyBytes(body);
  if (bytes !== null) return bytes;
  const { URLSearchParams, Blob, FormData } = lazyClasses;
  if (URLSearchParams !== null && body instanceof URLSearchParams) {
    return typedBody(body.toString(), 'application/x-www-form-urlencoded;charset=UTF-8', headers);
  }
  if (Blob !== null && body instanceof Blob) return typedBody(loadApi('blob.js').blobBytes(body), body.type || null, headers);
  if (FormData !== null && body instanceof FormData) {
    const form = loadApi('forms.js').serializeMultipart(body);
    return typedBody(form.value, form.type, headers);
  }
  if (isReadableStream(body)) {
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
// The content of a stream body of bytesStream's that nothing read from,
// taken whole (then as a read to its end leaves it), else undefined. A string
// reads back as its UTF-8 would (a lone surrogate as U+FFFD), as it did
// through the stream.
let surrogate = null;  // made at the first string taken so
function takeUnreadContent(stream) {
  const content = takeUnread(stream);
  if (typeof content === 'string' && (surrogate ??= /[\ud800-\udfff]/).test(content)) return utf8Decode(utf8Encode(content));
  return content;
}

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
    if (!isReadableStream(this.#body)) {
      this.#body = this.#used ? usedStream() : bytesStream(this.#body);
    }
    return this.#body;
  }
  get bodyUsed() { return this.#used || (isReadableStream(this.#body) && isDisturbed(this.#body)); }
  // The body's content (string, Uint8Array or null; a stream's that nothing
  // read from, whole), or a promise of a stream's bytes, marking it used. Not async, so that text() and json()
  // await only when there is a stream to read: one async call per read
  // instead of three, on the path nearly every body takes.
  #take() {
    if (this.bodyUsed) throw new TypeError('Body has already been used. It can only be used once. Use tee() first if you need to read it twice.');
    const body = this.#body;
    this.#used = true;
    if (!isReadableStream(body)) return body;
    if (body.locked) throw new TypeError('the body stream is locked to a reader');
    const content = takeUnreadContent(body);
    return content !== undefined ? content : readAllBytes(body);
  }
  async text() {
    const content = this.#take();
    return bodyText(content instanceof Promise ? await content : content);
  }
  async arrayBuffer() { return toArrayBuffer(bodyBytes(await this.#take())); }
  async bytes() { return bodyBytes(await this.#take()).slice(); }
  async json() {
    const content = this.#take();
    return JSON.parse(bodyText(content instanceof Promise ? await content : content));
  }
  async blob() {
    const { Blob } = loadApi('blob.js');
    return new Blob([bodyBytes(await this.#take())], { type: this.headers.get('content-type') || '' });
  }
  async formData() {
    const { FormData, multipartBoundary, parseMultipart } = loadApi('forms.js');
    const { URLSearchParams } = loadApi('url_search_params.js');
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
      if (!isReadableStream(body.#body)) return body.#body;
      if (body.bodyUsed || body.#body.locked) throw new TypeError('the Response\'s body stream was already read or is locked');
      const content = takeUnreadContent(body.#body);
      return content !== undefined ? content : readAllBytes(body.#body);
    };
    // the body for a clone: strings and bytes are immutable once stored, so
    // they are shared; a stream is teed, one branch for each.
    bodyForClone = body => {
      if (body.bodyUsed) throw new TypeError('Body has already been used. It can only be used once.');
      if (!isReadableStream(body.#body)) return body.#body;
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

export { extractBody, typedBody, bodyBytes, bodyText, bodyContent, bodyForClone, Body, usedStream };
