// Request, and the cf object of the requests the host dispatches.

import { loadApi, once } from './host.js';
import { Body, bodyForClone } from './body.js';
import { Headers } from './headers.js';
import { hrefOf } from './href.js';
import { ownStringsOf } from './own_strings.js';

// AbortSignal's module is loaded at a Request's first `signal` (esbuild's lazy
// initialiser): most workers never ask.
const abortModule = once(() => loadApi('abort.js'));

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
// Its url is the request's (natives.requestParts sets method, url and body).
const hostInit = { method: 'GET', headers: null, body: null, cf: undefined, redirect: 'manual', signal: undefined, url: null };

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
    if (this.#signal === null) this.#signal = new (abortModule().AbortSignal)();
    return this.#signal;
  }
  get cf() { return this.#cf; }
  get redirect() { return this.#redirect; }
  get integrity() { return ''; }
  get keepalive() { return false; }
  clone() { return new Request(this); }
}

ownStringsOf(Request.prototype, ['url']);

export { methods, normalizeMethod, defaultCf, cfByCountry, cfFor, noInit, hostInit, Request };
