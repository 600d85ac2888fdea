// Headers (Fetch), with the runtime's private access to its list.

import { ownStringsOf } from './own_strings.js';

// ---- Headers, bodies, Request, Response ----

// The checks below are loops and builtins rather than regular expressions:
// V8 compiles a pattern that runs more than once to native code, which then
// stays on the worker's heap.
const tokenSymbols = '!#$%&\'*+-.^_`|~';
// A token (RFC 9110), what a header name must be.
function isToken(text) {
  if (text.length === 0) return false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const alphanumeric = (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || (c >= 0x30 && c <= 0x39);
    if (!alphanumeric && !tokenSymbols.includes(text[i])) return false;
  }
  return true;
}
// Header names seen before -> their lower-case form: names repeat from request
// to request, so checking and lower-casing each again would allocate per header.
const headerNames = new Map();
function headerName(name) {
  const known = headerNames.get(name);
  if (known !== undefined) return known;
  const text = String(name);
  if (!isToken(text)) throw new TypeError('Invalid header name: ' + JSON.stringify(text));
  const lower = text.toLowerCase();
  if (typeof name === 'string' && headerNames.size < 4096) headerNames.set(name, lower);
  return lower;
}
const isHeaderWhitespace = code => code === 0x20 || code === 0x09 || code === 0x0a || code === 0x0d;
function headerValue(value) {
  let text = String(value);
  // Most values have nothing to trim: no regular expression, no new string.
  if (text.length !== 0 && (isHeaderWhitespace(text.charCodeAt(0)) || isHeaderWhitespace(text.charCodeAt(text.length - 1)))) {
    let start = 0, end = text.length;
    while (start < end && isHeaderWhitespace(text.charCodeAt(start))) start++;
    while (end > start && isHeaderWhitespace(text.charCodeAt(end - 1))) end--;
    text = text.slice(start, end);
  }
  if (text.includes('\n') || text.includes('\r') || text.includes('\0')) throw new TypeError('Invalid header value.');
  return text;
}
// workerd's wording, so a worker that reports the error answers the same.
const immutableHeaders = () => new TypeError('Can\'t modify immutable headers.');

// The sorted list of Headers without any (read only): most responses have none.
const noHeaders = Object.freeze([]);

let makeHeadersImmutable, adoptHeaders, flattenHeaders;  // set by Headers' static block
class Headers {
  // [name, value, name, value, ...] in insertion order, names lower-case; null
  // until the first header (most responses have none). A flat list is cheaper
  // than a Map of arrays for the handful of headers a message has.
  #list = null;
  #sortedList = null;  // #list sorted and combined, until the next change
  #immutable = false;  // Fetch's "immutable" guard: the received request's, Response.redirect()'s
  constructor(init) {
    if (init == null) return;
    if (init instanceof Headers) {
      if (init.#list !== null) this.#list = init.#list.slice();
    } else if (typeof init[Symbol.iterator] === 'function') {
      for (const pair of init) {
        const entry = Array.from(pair);
        if (entry.length !== 2) throw new TypeError('a Headers init pair must have exactly two items');
        this.append(entry[0], entry[1]);
      }
    } else if (typeof init === 'object') {
      for (const name in init) if (Object.prototype.hasOwnProperty.call(init, name)) this.append(name, init[name]);
    } else {
      throw new TypeError('Headers init must be an object, an array of pairs or Headers');
    }
  }
  append(name, value) {
    if (this.#immutable) throw immutableHeaders();
    const key = headerName(name);
    const v = headerValue(value);
    this.#sortedList = null;
    if (this.#list === null) this.#list = [key, v];
    else this.#list.push(key, v);
  }
  set(name, value) {
    if (this.#immutable) throw immutableHeaders();
    const key = headerName(name);
    const v = headerValue(value);
    const list = this.#list;
    this.#sortedList = null;
    if (list === null) { this.#list = [key, v]; return; }
    let at = -1;
    for (let i = 0; i < list.length; i += 2) {
      if (list[i] !== key) continue;
      if (at < 0) { at = i; list[i + 1] = v; } else { list.splice(i, 2); i -= 2; }
    }
    if (at < 0) list.push(key, v);
  }
  get(name) {
    const list = this.#list;
    if (list === null) { headerName(name); return null; }
    const key = headerName(name);
    let found = null;
    for (let i = 0; i < list.length; i += 2) {
      if (list[i] === key) found = found === null ? list[i + 1] : found + ', ' + list[i + 1];
    }
    return found;
  }
  // workerd's extension, for the one header whose values are never combined.
  getAll(name) {
    if (headerName(name) !== 'set-cookie') throw new TypeError('getAll() can only be used with the header name "Set-Cookie".');
    return this.getSetCookie();
  }
  getSetCookie() {
    const cookies = [];
    const list = this.#list;
    if (list !== null) for (let i = 0; i < list.length; i += 2) if (list[i] === 'set-cookie') cookies.push(list[i + 1]);
    return cookies;
  }
  has(name) {
    const key = headerName(name);
    const list = this.#list;
    if (list !== null) for (let i = 0; i < list.length; i += 2) if (list[i] === key) return true;
    return false;
  }
  delete(name) {
    if (this.#immutable) throw immutableHeaders();
    const key = headerName(name);
    const list = this.#list;
    this.#sortedList = null;
    if (list !== null) for (let i = list.length - 2; i >= 0; i -= 2) if (list[i] === key) list.splice(i, 2);
  }
  // The runtime's access to Headers, private to this file (a static would be
  // reachable by every worker):
  static {
    // from now on append, set and delete throw, as they do in workerd on the
    // headers of the request a worker receives;
    makeHeadersImmutable = headers => { headers.#immutable = true; };
    // Headers that take `list` over ([name, value, ...], names already
    // lower-case and valid, values valid) instead of copying it;
    adoptHeaders = list => {
      const headers = new Headers();
      if (list.length > 0) headers.#list = list;
      return headers;
    };
    // [name, value, ...] in iteration order (read only).
    flattenHeaders = headers => headers.#sortedCombined();
  }
  // [name, value, ...] sorted by name, values combined, Set-Cookie kept apart
  // (Fetch's "sort and combine"); the list itself when it is already so.
  static #sorted(list) {
    let ordered = true;
    for (let i = 2; i < list.length && ordered; i += 2) ordered = list[i - 2] < list[i] || (list[i] === 'set-cookie' && list[i - 2] === 'set-cookie');
    if (ordered) return list;
    // Inserted by name into one list (header lists are short): no list of
    // names, no Array.prototype.sort and its work arrays.
    const out = [];
    for (let i = 0; i < list.length; i += 2) {
      const name = list[i];
      let j = out.length;
      while (j > 0 && out[j - 2] > name) j -= 2;
      if (j > 0 && out[j - 2] === name && name !== 'set-cookie') { out[j - 1] = out[j - 1] + ', ' + list[i + 1]; continue; }
      out.push(name, list[i + 1]);
      for (let k = out.length - 1; k > j + 1; k--) out[k] = out[k - 2];
      out[j] = name;
      out[j + 1] = list[i + 1];
    }
    return out;
  }
  #sortedCombined() {
    if (this.#sortedList === null) this.#sortedList = this.#list === null ? noHeaders : Headers.#sorted(this.#list);
    return this.#sortedList;
  }
  // As the spec's iterator: by index into the current sorted list, so a change while iterating is seen.
  *entries() {
    for (let i = 0; ; i += 2) {
      const sorted = this.#sortedCombined();
      if (i >= sorted.length) return;
      yield [sorted[i], sorted[i + 1]];
    }
  }
  *keys() { for (const [name] of this.entries()) yield name; }
  *values() { for (const [, value] of this.entries()) yield value; }
  forEach(callback, thisArg) { for (const [name, value] of this.entries()) callback.call(thisArg, value, name, this); }
  [Symbol.iterator]() { return this.entries(); }
}

ownStringsOf(Headers.prototype, ['get']);

export { isToken, headerNames, headerName, isHeaderWhitespace,
  headerValue, immutableHeaders, noHeaders, makeHeadersImmutable, adoptHeaders, flattenHeaders, Headers };
