// URL (WHATWG), for URLs with an authority.

import { URLSearchParams, ownParams, resetParams } from './url_search_params.js';
import { isNormalHref } from './href.js';
import { ownStringsOf } from './own_strings.js';

// URLs with an authority (http, https, ws, wss, ftp, file and the like),
// absolute or relative to a base (/path, ?query, #hash, a/b, ../c), with the
// WHATWG URL standard's canonical forms for what these hold: lower-case scheme
// and host, default ports dropped, dot segments resolved, the percent-encode
// sets of path, query and fragment, and setters that canonicalize (as
// URLPattern relies on). No IDNA, no IPv6 or opaque-path URLs.
const defaultPorts = { 'http:': '80', 'https:': '443', 'ws:': '80', 'wss:': '443', 'ftp:': '21' };
const urlPattern = /^([a-zA-Z][a-zA-Z0-9+.-]*:)\/\/(?:([^/?#@]*)@)?([^/?#:]*)(?::([0-9]*))?([^?#]*)(\?[^#]*)?(#.*)?$/;
// One code point of an encode set as UTF-8 percent-escapes. The sets match
// whole code points (the u flag), so a surrogate pair is one character; a lone
// surrogate becomes U+FFFD's bytes, and "'" (which encodeURIComponent leaves
// alone) %27, as the special-query set wants.
const percentEncodeCodePoint = c => c === "'" ? '%27' : c.length === 1 && c >= '\ud800' && c <= '\udfff' ? '%EF%BF%BD' : encodeURIComponent(c);
const percentEncoder = pattern => text => pattern.test(text) ? text.replace(pattern, percentEncodeCodePoint) : text;
// The path, query and fragment percent-encode sets (ASCII part; non-ASCII is always encoded).
const encodePath = percentEncoder(/[\u0000-\u0020"#<>?`{}\u007f-\u{10ffff}]/gu);
const encodeQuery = percentEncoder(/[\u0000-\u0020"#<>'\u007f-\u{10ffff}]/gu);
const encodeFragment = percentEncoder(/[\u0000-\u0020"<>`\u007f-\u{10ffff}]/gu);
const encodeUserinfo = percentEncoder(/[\u0000-\u0020"#<>?`{}/:;=@[\\\]^|\u007f-\u{10ffff}]/gu);
// Regular expressions of the hot paths are made once: a literal in a function makes a RegExp per call.
const dotSegmentOrBackslash = /(^|\/)(\.|%2e){1,2}(\/|$)|\\/i;
const outerSpaces = /^[\u0000-\u0020]+|[\u0000-\u0020]+$/g;
const tabOrNewline = /[\t\n\r]/;
const tabsAndNewlines = /[\t\n\r]/g;
function normalizePath(path) {
  if (path === '') return '/';
  if (!dotSegmentOrBackslash.test(path)) return encodePath(path);
  const out = [];
  const segments = path.replace(/\\/g, '/').split('/').slice(1);
  segments.forEach((segment, i) => {
    const last = i === segments.length - 1;
    if (segment === '..' || segment.toLowerCase() === '%2e%2e') { out.pop(); if (last) out.push(''); }
    else if (segment === '.' || segment.toLowerCase() === '%2e') { if (last) out.push(''); }
    else out.push(segment);
  });
  return encodePath('/' + out.join('/'));
}
const normalizePort = (protocol, port) => port === '' || defaultPorts[protocol] === String(Number(port)) ? '' : String(Number(port));

let queryChanged;  // set by URL's static block, for URLSearchParams
class URL {
  // #search and #hash keep a lone '?' or '#' (an empty query or fragment shows in href only).
  #protocol; #username = ''; #password = ''; #hostname; #port; #pathname; #search; #hash;
  #params = null;  // parsed on first use
  constructor(input, base) {
    this.#parse(String(input), base === undefined ? null : base instanceof URL ? base : new URL(base));
  }
  #parse(text, base) {
    if (text.charCodeAt(0) <= 0x20 || text.charCodeAt(text.length - 1) <= 0x20) {
      text = text.replace(outerSpaces, '');
    }
    if (tabOrNewline.test(text)) text = text.replace(tabsAndNewlines, '');
    if (isNormalHref(text)) {
      // Already normal (the URL a worker makes from request.url, mostly): the
      // parts are slices of it, without the match array of the full parse.
      const hostAt = text.charCodeAt(4) === 0x3a ? 7 : 8;
      const pathAt = text.indexOf('/', hostAt);
      const queryAt = text.indexOf('?', pathAt);
      const colon = text.lastIndexOf(':', pathAt);  // a port (not the scheme's default) when past the scheme's
      this.#protocol = hostAt === 7 ? 'http:' : 'https:';
      this.#hostname = text.slice(hostAt, colon < hostAt ? pathAt : colon);
      this.#port = colon < hostAt ? '' : text.slice(colon + 1, pathAt);
      this.#pathname = queryAt < 0 ? text.slice(pathAt) : text.slice(pathAt, queryAt);
      this.#search = queryAt < 0 ? '' : text.slice(queryAt);
      this.#hash = '';
      return;
    }
    const m = urlPattern.exec(text);
    if (m !== null) {
      const protocol = m[1].toLowerCase();
      if (m[4] !== undefined && m[4] !== '' && Number(m[4]) > 65535) throw new TypeError('Invalid URL: ' + text);
      if (m[3] === '' && protocol !== 'file:') throw new TypeError('Invalid URL: ' + text);
      this.#protocol = protocol;
      if (m[2] !== undefined) {
        const colon = m[2].indexOf(':');
        this.#username = encodeUserinfo(colon < 0 ? m[2] : m[2].slice(0, colon));
        this.#password = colon < 0 ? '' : encodeUserinfo(m[2].slice(colon + 1));
      }
      this.#hostname = m[3].toLowerCase();
      this.#port = m[4] === undefined ? '' : normalizePort(protocol, m[4]);
      this.#pathname = normalizePath(m[5]);
      this.#search = m[6] === undefined ? '' : encodeQuery(m[6]);
      this.#hash = m[7] === undefined ? '' : encodeFragment(m[7]);
      return;
    }
    if (base === null || /^[a-zA-Z][a-zA-Z0-9+.-]*:/.test(text)) throw new TypeError('Invalid URL: ' + text);
    this.#protocol = base.#protocol; this.#username = base.#username; this.#password = base.#password;
    this.#hostname = base.#hostname; this.#port = base.#port;
    if (text.startsWith('//')) { this.#parse(base.#protocol + text, null); return; }
    const hashAt = text.indexOf('#');
    const beforeHash = hashAt < 0 ? text : text.slice(0, hashAt);
    this.#hash = hashAt < 0 ? '' : encodeFragment(text.slice(hashAt));
    const queryAt = beforeHash.indexOf('?');
    const path = queryAt < 0 ? beforeHash : beforeHash.slice(0, queryAt);
    const query = queryAt < 0 ? null : beforeHash.slice(queryAt);
    if (path === '') {
      this.#pathname = base.#pathname;
      this.#search = query === null ? base.#search : encodeQuery(query);
      if (hashAt < 0 && query === null) this.#hash = '';
      return;
    }
    const dir = base.#pathname.slice(0, base.#pathname.lastIndexOf('/') + 1);
    this.#pathname = normalizePath(path.startsWith('/') || path.startsWith('\\') ? path : dir + path);
    this.#search = query === null ? '' : encodeQuery(query);
  }
  static canParse(input, base) {
    try { new URL(input, base); return true; } catch { return false; }
  }
  static parse(input, base) {
    try { return new URL(input, base); } catch { return null; }
  }
  // Blob URLs: workerd has none either, and says so in these words.
  static createObjectURL() { throw new Error('URL.createObjectURL() is not implemented'); }
  static revokeObjectURL() { throw new Error('URL.revokeObjectURL() is not implemented'); }
  get protocol() { return this.#protocol; }
  set protocol(value) {
    const m = /^([a-zA-Z][a-zA-Z0-9+.-]*)/.exec(String(value));
    if (m !== null) { this.#protocol = m[1].toLowerCase() + ':'; this.#port = normalizePort(this.#protocol, this.#port); }
  }
  get username() { return this.#username; }
  set username(value) { this.#username = encodeUserinfo(String(value)); }
  get password() { return this.#password; }
  set password(value) { this.#password = encodeUserinfo(String(value)); }
  get hostname() { return this.#hostname; }
  set hostname(value) {
    const host = String(value).split(/[:/?#\\]/)[0];
    if (host !== '') this.#hostname = host.toLowerCase();
  }
  get port() { return this.#port; }
  set port(value) {
    const digits = /^[0-9]*/.exec(String(value))[0];
    if (String(value) === '') this.#port = '';
    else if (digits !== '' && Number(digits) <= 65535) this.#port = normalizePort(this.#protocol, digits);
  }
  get host() { return this.#host(); }
  set host(value) {
    const m = /^([^:/?#\\]*)(?::([0-9]*))?/.exec(String(value));
    if (m[1] === '') return;
    this.#hostname = m[1].toLowerCase();
    if (m[2] !== undefined && m[2] !== '' && Number(m[2]) <= 65535) this.#port = normalizePort(this.#protocol, m[2]);
  }
  get pathname() { return this.#pathname; }
  set pathname(value) {
    const path = String(value);
    this.#pathname = normalizePath(path.startsWith('/') || path.startsWith('\\') ? path : '/' + path);
  }
  get search() { return this.#search === '?' ? '' : this.#search; }
  set search(value) {
    const text = String(value);
    this.#search = text === '' ? '' : encodeQuery(text.startsWith('?') ? text : '?' + text);
    if (this.#params !== null) resetParams(this.#params, this.#search);
  }
  get hash() { return this.#hash === '#' ? '' : this.#hash; }
  set hash(value) {
    const text = String(value);
    this.#hash = text === '' ? '' : encodeFragment(text.startsWith('#') ? text : '#' + text);
  }
  get searchParams() {
    if (this.#params === null) {
      this.#params = new URLSearchParams(this.#search);
      // The URL's query follows its searchParams' changes (no closure per URL).
      ownParams(this.#params, this);
    }
    return this.#params;
  }
  // For URLSearchParams (private to this file): the query of `url` after its searchParams changed.
  static { queryChanged = (url, text) => { url.#search = text === '' ? '' : '?' + text; }; }
  get origin() { return this.#protocol === 'file:' ? 'null' : this.#protocol + '//' + this.#host(); }
  #host() { return this.#port === '' ? this.#hostname : this.#hostname + ':' + this.#port; }
  #href() {
    const userinfo = this.#username === '' && this.#password === '' ? ''
      : this.#username + (this.#password === '' ? '' : ':' + this.#password) + '@';
    return this.#protocol + '//' + userinfo + this.#host() + this.#pathname + this.#search + this.#hash;
  }
  get href() { return this.#href(); }
  set href(value) {
    const parsed = new URL(value);
    this.#protocol = parsed.#protocol; this.#username = parsed.#username; this.#password = parsed.#password;
    this.#hostname = parsed.#hostname; this.#port = parsed.#port; this.#pathname = parsed.#pathname;
    this.#hash = parsed.#hash;
    this.search = parsed.#search;
  }
  toString() { return this.#href(); }
  toJSON() { return this.#href(); }
}

ownStringsOf(URL.prototype, ['href', 'origin', 'protocol', 'username', 'password', 'host', 'hostname', 'port',
  'pathname', 'search', 'hash', 'toString', 'toJSON']);

export { queryChanged, URL };
