// Response, with Response.json as a native.

import { Body, bodyForClone } from './body.js';
import { Headers, makeHeadersImmutable } from './headers.js';
import { jsonResponder, loadApi } from './host.js';
import { noInit } from './request.js';

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
    const response = new Response(null, { status, headers: { location: new (loadApi('url.js').URL)(String(url)).href } });
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

export { nullBodyStatus, OwnedHeadersInit, responseCf, Response, finishJson };
