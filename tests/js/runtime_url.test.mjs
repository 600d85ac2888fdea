// The worker runtime's URL (heapprof/runtime/js/prelude/url.js) against Node's
// WHATWG URL, the reference: every component of absolute and relative URLs,
// the setters URLPattern canonicalizes through, and searchParams updating
// the URL. Runs the prelude in a fresh vm context with Node's primitives as
// its natives.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import vm from 'node:vm';

// The embedded prelude, as the build bundled it (HEAPPROF_PRELUDE, set by CTest).
if (!process.env.HEAPPROF_PRELUDE) throw new Error('HEAPPROF_PRELUDE (the bundled prelude, build/generated/heapprof/worker_prelude.js) is not set');
const prelude = readFileSync(process.env.HEAPPROF_PRELUDE, 'utf8');
// Its second script (URL is one of its Web APIs), built beside it.
const apis = readFileSync(path.join(path.dirname(process.env.HEAPPROF_PRELUDE), 'worker_apis.js'), 'utf8');
const context = vm.createContext({});
const encoder = new TextEncoder();
const decoder = new TextDecoder();
// The bundle is the body of the installer, a function of (hostNatives, hostLibraries, hostOptions).
vm.compileFunction(prelude, ['hostNatives', 'hostLibraries', 'hostOptions'], { parsingContext: context })({
  consoleWrite() {}, utf8Encode: s => encoder.encode(s), utf8Decode: b => decoder.decode(b), structuredClone,
  randomFill: a => a,
  webApis: () => vm.compileFunction(apis, ['require'], { parsingContext: context }),
  ownStrings: fn => function (...args) { return fn.apply(this, args); },  // V8's copy is not needed here
  base64Functions: () => [atob, btoa],  // Node's: base64 is not under test here
  jsonResponder: finish => function json(data, init) { return finish(JSON.stringify(data), init); },
  // worker_http_natives.cpp's check (IsNormalHttpHref), written again: a host
  // of [a-z0-9.-] that is not IPv4 unless a canonical dotted quad, a port the
  // parse keeps, a path and query of characters no encode set touches, no dot segment.
  isNormalHref: text => {
    const m = /^https?:\/\/([a-z0-9.-]+)(?::([0-9]*))?(\/[^\u0000-\u0020"#<>?`{}\\\u007f-\uffff]*(?:\?[^\u0000-\u0020"#<>'\u007f-\uffff]*)?)$/.exec(text);
    if (m === null || /(?:^|\/)(?:\.|%2e){1,2}(?:[\/?]|$)/i.test(text)) return false;
    const labels = m[1].split('.');
    if (labels.some(l => l === '' || l.startsWith('xn--'))) return false;
    const last = labels[labels.length - 1];
    if (/^[0-9]+$/.test(last) || last.startsWith('0x')) {
      if (labels.length !== 4 || !labels.every(l => /^(0|[1-9][0-9]{0,2})$/.test(l) && Number(l) <= 255)) return false;
    }
    if (m[2] === undefined) return true;
    return /^[1-9][0-9]{0,4}$/.test(m[2]) && Number(m[2]) <= 65535 && m[2] !== (text.startsWith('https') ? '443' : '80');
  },
  lazyGlobals(names, make) {
    for (const name of names) this.lazyProperty(context, name, make, true);
  },
  setInternals() {},
  // V8's lazy data property, as a getter that puts the value in its place.
  lazyProperty(object, name, make, enumerable) {
    Object.defineProperty(object, name, {
      configurable: true, enumerable,
      get() {
        const value = make(name);
        Object.defineProperty(object, name, { value, writable: true, configurable: true, enumerable });
        return value;
      },
    });
  },
}, { load: () => ({ ReadableStream, WritableStream, TransformStream }) },  // Node's for web-streams-polyfill's: classes extend them
  {});  // the runtime's options: none (no nodejs_compat)
const RuntimeURL = vm.runInContext('URL', context);
const components = ['href', 'origin', 'protocol', 'username', 'password', 'host', 'hostname', 'port', 'pathname',
  'search', 'hash'];

test('parsing matches WHATWG URL', () => {
  const cases = [
    ['https://EXAMPLE.com:443/a/../b?x=1#f'], ['http://example.com:80/'], ['https://shop.example.com/api/users/12?include=items'],
    ['https://a.test/x y/"q"?a b=c d#h i'], ['https://user:pa ss@a.test:8080/p'], ['/p/q?r', 'https://a.test/base/x'],
    ['../up', 'https://a.test/a/b/c'], ['sub/file', 'https://a.test/a/b'], ['?only', 'https://a.test/a/b?x#y'],
    ['#frag', 'https://a.test/a?q'], ['//other.test/z', 'https://a.test/'], ['https://a.test'],
    ['https://a.test/./a/./b/..'], ['https://a.test/é?é#é'], ['  https://a.test/trim  '], ['https://a.test/%2e%2e/x'],
    ['wss://a.test:443/'], ['https://a.test/a\\b'], ['http://a.test:8080/?'], ['https://a.test/#'],
    // encodeURIComponent's gaps: "'" in a query, astral characters, lone surrogates.
    ["https://a.test/it's?q='x'#'"], ['https://a.test/\u{1F600}?e=\u{1F600}#\u{1F600}'], ['https://a.test/\ud800x?\udc00#\ud83d'],
  ];
  for (const [input, base] of cases) {
    const want = new URL(input, base);
    const got = new RuntimeURL(input, base);
    for (const key of components) assert.equal(got[key], want[key], `${key} of new URL(${JSON.stringify(input)}, ${base})`);
  }
  for (const bad of ['nope', 'https://', 'https://a.test:99999/', 'relative/only']) {
    assert.throws(() => new RuntimeURL(bad), e => e.name === 'TypeError', bad);  // the vm context's TypeError
    assert.throws(() => new URL(bad), TypeError, bad);
  }
});

test('setters canonicalize like WHATWG URL', () => {
  const sets = [['search', 'x=1'], ['search', '?a b'], ['search', ''], ['hash', 'h'], ['pathname', 'a b/../c'],
    ['port', '443'], ['port', '8080'], ['port', ''], ['hostname', 'EXAMPLE.org'], ['host', 'b.test:81'],
    ['protocol', 'HTTP'], ['username', 'u@'], ['password', 'p:'], ['href', 'https://c.test/d?e#f']];
  for (const [key, value] of sets) {
    const want = new URL('https://example.com:8443/p?q#h');
    const got = new RuntimeURL('https://example.com:8443/p?q#h');
    want[key] = value;
    got[key] = value;
    for (const component of components) assert.equal(got[component], want[component], `${component} after ${key} = ${value}`);
  }
});

test('searchParams changes update the URL', () => {
  const want = new URL('https://a.test/?b=2&a=1');
  const got = new RuntimeURL('https://a.test/?b=2&a=1');
  for (const url of [want, got]) {
    url.searchParams.set('c', 'x y');
    url.searchParams.sort();
    url.searchParams.append('d', '&');
    url.searchParams.delete('a');
  }
  assert.equal(got.href, want.href);
  got.search = '?z=9';
  assert.equal(got.searchParams.get('z'), '9');
});

test('form encoding and decoding follow the URL standard where encodeURIComponent throws', () => {
  const RuntimeParams = vm.runInContext('URLSearchParams', context);
  for (const query of ['a=%C3%A9%ZZ%FF&b=%', 'x=%E2%82&y=100%25', 'plus=a+b%2Bc', "q='%27"]) {
    const want = new URLSearchParams(query), got = new RuntimeParams(query);
    assert.equal(JSON.stringify([...got]), JSON.stringify([...want]), `entries of ${query}`);
  }
  const want = new URLSearchParams(), got = new RuntimeParams();
  for (const params of [want, got]) {
    params.append('lone\ud800', 'v\udc00');
    params.append('emoji', '\u{1F600}');
  }
  assert.equal(got.toString(), want.toString());
});

test("a Request's url and a URL's parts are the parse's, also where it is skipped", () => {
  const RuntimeRequest = vm.runInContext('Request', context);
  // Already-normal URLs (the parse is skipped) and near misses of every
  // condition that lets it be skipped (the parse must run).
  const cases = ['https://shop.example.com/api/users/12?include=items', 'http://a.test/x', 'https://a.test/',
    'https://a.test/a/b?c=/./d', 'https://a.test/.hidden/x..y', 'https://a.test/x?', 'https://a.test/a|b^c?d[e]',
    'HTTPS://a.test/x', 'https://A.test/x', 'https://a.test/./x', 'https://a.test/x/..', 'https://a.test/x/.',
    'https://a.test/%2E%2e/y', 'https://a.test/x/..?q', 'https://a.test/x?y#z', 'https://a.test:443/x',
    'https://a.test:8080/x', 'https://u:p@a.test/x', 'https://a.test/x y', 'https://a.test/é', 'https://a.test/x?é',
    'https://a.test/x?"q"', 'https://a.test/a\\b', 'https://a.test', 'https://a.test/`{x}', ' https://a.test/x',
    'https://a.test/x\n', 'https://a.test/a\tb', 'ftp://a.test/x',
    // Ports (a local server's requests), IPv4 in its canonical form.
    'http://127.0.0.1:8787/a?b=1', 'http://localhost:8787/', 'http://a.test:80/x', 'https://a.test:65535/',
    'http://a.test:08787/x', 'http://a.test:/x', 'http://1.2.3.4/x', 'https://a.1b/'];
  for (const input of cases) {
    const want = new URL(input).href;
    assert.equal(new RuntimeRequest(input).url, want, `new Request(${JSON.stringify(input)}).url`);
    const url = new RuntimeURL(input), reference = new URL(input);
    for (const key of components) assert.equal(url[key], reference[key], `${key} of new URL(${JSON.stringify(input)})`);
  }
  assert.throws(() => new RuntimeRequest('https://a.test:99999/x'), e => e.name === 'TypeError');
});
