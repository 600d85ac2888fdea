// The JavaScript half of heapprof's worker runtime, embedded at build time
// (WorkerPrelude.cmake). Its completion value is the installer function.
(function installWorkerGlobals(natives) {
'use strict';
const { consoleWrite, utf8Encode, utf8Decode } = natives;

class Headers {
  #map = null;  // created on the first header: most responses have none
  constructor(init) {
    if (init == null) return;
    if (init instanceof Headers) {
      init.forEach((value, name) => this.append(name, value));
    } else if (Array.isArray(init)) {
      for (let i = 0; i < init.length; i++) this.append(init[i][0], init[i][1]);
    } else {
      for (const name in init) this.append(name, init[name]);
    }
  }
  append(name, value) {
    const key = String(name).toLowerCase();
    if (this.#map === null) this.#map = new Map();
    const old = this.#map.get(key);
    this.#map.set(key, old === undefined ? String(value) : old + ', ' + value);
  }
  set(name, value) {
    if (this.#map === null) this.#map = new Map();
    this.#map.set(String(name).toLowerCase(), String(value));
  }
  get(name) {
    const v = this.#map === null ? undefined : this.#map.get(String(name).toLowerCase());
    return v === undefined ? null : v;
  }
  has(name) { return this.#map !== null && this.#map.has(String(name).toLowerCase()); }
  delete(name) { if (this.#map !== null) this.#map.delete(String(name).toLowerCase()); }
  entries() { return (this.#map || new Map()).entries(); }
  keys() { return (this.#map || new Map()).keys(); }
  values() { return (this.#map || new Map()).values(); }
  forEach(callback, thisArg) { if (this.#map !== null) this.#map.forEach((v, k) => callback.call(thisArg, v, k, this)); }
  [Symbol.iterator]() { return this.entries(); }
}

// A body is held as a string or as bytes (a private Uint8Array copy); it is
// read back as what was put in: bytes stay bytes.
function toBodyValue(body) {
  if (body == null) return null;
  if (typeof body === 'string') return body;
  if (body instanceof ArrayBuffer) return new Uint8Array(body.slice(0));
  if (ArrayBuffer.isView(body)) {
    return new Uint8Array(body.buffer.slice(body.byteOffset, body.byteOffset + body.byteLength));
  }
  if (body instanceof URLSearchParams) return body.toString();
  return String(body);
}
const bodyBytes = value => value === null ? new Uint8Array(0) : typeof value === 'string' ? utf8Encode(value) : value;
const bodyText = value => value === null ? '' : typeof value === 'string' ? value : utf8Decode(value);

class Body {
  #body;
  #used = false;
  constructor(body) { this.#body = toBodyValue(body); }
  get bodyUsed() { return this.#used; }
  #take() {
    if (this.#used) throw new TypeError('body already used');
    this.#used = true;
    return this.#body;
  }
  async text() { return bodyText(this.#take()); }
  async arrayBuffer() {
    const bytes = bodyBytes(this.#take());
    return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
  }
  async json() { return JSON.parse(await this.text()); }
  // For the runtime: the body as given (string, Uint8Array or null), without marking it used.
  static peek(body) { return body.#body; }
}

class Request extends Body {
  constructor(input, init = {}) {
    super(init.body);
    this.url = String(input instanceof Request ? input.url : input);
    this.method = String(init.method || 'GET').toUpperCase();
    this.headers = new Headers(init.headers);
  }
}

class Response extends Body {
  constructor(body, init = {}) {
    super(body);
    this.status = init.status ?? 200;
    this.statusText = init.statusText ?? '';
    this.headers = new Headers(init.headers);
  }
  get ok() { return this.status >= 200 && this.status < 300; }
  static json(data, init = {}) {
    const headers = new Headers(init.headers);
    if (!headers.has('content-type')) headers.set('content-type', 'application/json');
    return new Response(JSON.stringify(data), { ...init, headers });
  }
}

const decode = s => decodeURIComponent(s.replace(/\+/g, ' '));
class URLSearchParams {
  #list = [];
  constructor(query = '') {
    const parts = String(query).replace(/^\?/, '').split('&');
    for (let i = 0; i < parts.length; i++) {
      const part = parts[i];
      if (!part) continue;
      const eq = part.indexOf('=');
      this.#list.push(eq < 0 ? [decode(part), ''] : [decode(part.slice(0, eq)), decode(part.slice(eq + 1))]);
    }
  }
  get(name) { const e = this.#list.find(([k]) => k === name); return e ? e[1] : null; }
  getAll(name) { return this.#list.filter(([k]) => k === name).map(([, v]) => v); }
  has(name) { return this.#list.some(([k]) => k === name); }
  entries() { return this.#list[Symbol.iterator](); }
  [Symbol.iterator]() { return this.#list[Symbol.iterator](); }
  toString() {
    return this.#list.map(([k, v]) => encodeURIComponent(k) + '=' + encodeURIComponent(v)).join('&');
  }
}

// Absolute http(s)-style URLs, or a path relative to a base. No IDNA, no
// percent-normalisation: enough to route requests.
class URL {
  #params = null;  // parsed on first use
  constructor(input, base) {
    let text = String(input);
    if (base !== undefined && text.startsWith('/')) text = new URL(base).origin + text;
    const m = /^([a-zA-Z][a-zA-Z0-9+.-]*:)\/\/([^/?#]*)([^?#]*)(\?[^#]*)?(#.*)?$/.exec(text);
    if (!m) throw new TypeError('Invalid URL: ' + text);
    this.protocol = m[1].toLowerCase();
    this.host = m[2];
    const colon = m[2].lastIndexOf(':');
    this.hostname = colon < 0 ? m[2] : m[2].slice(0, colon);
    this.port = colon < 0 ? '' : m[2].slice(colon + 1);
    this.pathname = m[3] || '/';
    this.search = m[4] && m[4] !== '?' ? m[4] : '';
    this.hash = m[5] && m[5] !== '#' ? m[5] : '';
  }
  get searchParams() {
    if (this.#params === null) this.#params = new URLSearchParams(this.search);
    return this.#params;
  }
  get origin() { return this.protocol + '//' + this.host; }
  get href() { return this.origin + this.pathname + this.search + this.hash; }
  toString() { return this.href; }
  toJSON() { return this.href; }
}

function formatArg(value) {
  if (typeof value === 'string') return value;
  if (value instanceof Error) return value.stack || String(value);
  if (typeof value === 'object' && value !== null) {
    try { return JSON.stringify(value); } catch { return Object.prototype.toString.call(value); }
  }
  return String(value);
}
const consoleMethod = level => (...args) => consoleWrite(level, args.map(formatArg).join(' '));
const console = {
  log: consoleMethod('log'), info: consoleMethod('info'), debug: consoleMethod('debug'),
  warn: consoleMethod('warn'), error: consoleMethod('error'),
};

// Timers on virtual time: a timer fires once microtasks are drained and no
// earlier timer is due; nothing waits for real time to pass.
let virtualNow = 0;
let nextTimerId = 0;
const timers = new Map();
function setTimeout(callback, delay = 0, ...args) {
  const id = ++nextTimerId;
  timers.set(id, { due: virtualNow + Math.max(0, Number(delay) || 0), callback, args });
  return id;
}
function clearTimeout(id) { timers.delete(id); }
function runNextTimer() {
  let bestId = 0, best = null;
  for (const [id, timer] of timers) if (best === null || timer.due < best.due) { bestId = id; best = timer; }
  if (best === null) return false;
  timers.delete(bestId);
  virtualNow = best.due;
  best.callback(...best.args);
  return true;
}
const queueMicrotask = callback => { Promise.resolve().then(callback); };

const fetchListeners = [];
function addEventListener(type, listener) {
  if (type === 'fetch' && typeof listener === 'function') fetchListeners.push(listener);
}

Object.assign(globalThis, {
  Headers, Request, Response, URL, URLSearchParams, console,
  setTimeout, clearTimeout, queueMicrotask, addEventListener,
});

return {
  fetchListeners,
  runNextTimer,
  makeRequest(method, url, flatHeaders, body) {
    const headers = new Headers();
    for (let i = 0; i < flatHeaders.length; i += 2) headers.append(flatHeaders[i], flatHeaders[i + 1]);
    return new Request(url, { method, headers, body: body === '' ? undefined : body });
  },
  // [status, statusText, [name, value, ...], body (string or Uint8Array)] of
  // what a handler returned, for the host.
  async readResponse(response) {
    if (!(response instanceof Response)) {
      throw new TypeError('the fetch handler returned ' +
        (response === null ? 'null' : typeof response === 'object' ? 'an object that is not a Response' : typeof response) +
        ' instead of a Response');
    }
    const flatHeaders = [];
    response.headers.forEach((value, name) => { flatHeaders.push(name, value); });
    const body = Body.peek(response);
    return [response.status, response.statusText, flatHeaders, body === null ? '' : body];
  },
  // ctx for fetch(request, env, ctx); the array collects waitUntil promises.
  makeContext() {
    const waits = [];
    const ctx = { waitUntil(promise) { waits.push(Promise.resolve(promise)); }, passThroughOnException() {} };
    return [ctx, waits];
  },
  // A FetchEvent for service-worker style scripts; state.response is set by respondWith.
  makeFetchEvent(request, ctx) {
    const state = { response: undefined, responded: false };
    const event = {
      type: 'fetch', request,
      waitUntil: ctx.waitUntil, passThroughOnException() {},
      respondWith(response) {
        if (state.responded) throw new Error('respondWith() was already called for this request');
        state.responded = true;
        state.response = Promise.resolve(response);
      },
    };
    return [event, state];
  },
};
})
