// URLSearchParams and application/x-www-form-urlencoded.

import { lazyClasses } from './host.js';
import { ownStringsOf } from './own_strings.js';
import { queryChanged } from './url.js';

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
  const { TextDecoder, TextEncoder } = require('./encoding.js');
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
  if (text === '' || text === '?') return list;
  const parts = (text.charCodeAt(0) === 0x3f ? text.slice(1) : text).split('&');
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i];
    if (!part) continue;
    const eq = part.indexOf('=');
    list.push(eq < 0 ? [formDecode(part), ''] : [formDecode(part.slice(0, eq)), formDecode(part.slice(eq + 1))]);
  }
  return list;
}
let ownParams, resetParams;  // set by URLSearchParams' static block
class URLSearchParams {
  #list;  // [[name, value], ...], made by the branch below that fills it
  #owner = null;  // the URL whose searchParams these are: its query follows their changes
  constructor(init = '') {
    if (typeof init !== 'object' || init === null) {
      this.#list = parseQuery(String(init));
    } else if (init instanceof URLSearchParams) {
      this.#list = init.#list.map(e => e.slice());
    } else if (typeof init[Symbol.iterator] === 'function') {
      this.#list = [];
      for (const pair of init) {
        const entry = Array.from(pair);
        if (entry.length !== 2) throw new TypeError('a URLSearchParams init pair must have exactly two items');
        this.#list.push([String(entry[0]), String(entry[1])]);
      }
    } else {
      this.#list = [];
      for (const name of Object.keys(init)) this.#list.push([name, String(init[name])]);
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
  // By index rather than for-of and destructuring: no array iterator and no
  // result object of its per entry.
  *entries() { const list = this.#list; for (let i = 0; i < list.length; i++) yield [list[i][0], list[i][1]]; }
  *keys() { const list = this.#list; for (let i = 0; i < list.length; i++) yield list[i][0]; }
  *values() { const list = this.#list; for (let i = 0; i < list.length; i++) yield list[i][1]; }
  [Symbol.iterator]() { return this.entries(); }
  toString() { return this.#list.map(([k, v]) => formEncode(k) + '=' + formEncode(v)).join('&'); }
}

ownStringsOf(URLSearchParams.prototype, ['get']);
lazyClasses.URLSearchParams = URLSearchParams;

export { ownParams, resetParams, URLSearchParams };
