// Not a framework: the global API surface a worker sees, one route per piece,
// so a difference from workerd names the API it is in. Each answer is one
// line per property, sorted: its name and what it is (typeof a data
// property's value; get, set or getset for an accessor). Properties of a
// prototype are read as descriptors, never through the getter, which throws
// off an instance in workerd.
//   /globals            every name globalThis has, along its prototype chain
//   /class/NAME         NAME's static own properties and its prototype's own properties
//   /object/PATH        an object's properties along its chain (crypto, crypto.subtle, ...)
//   /instance/NAME      the own properties of a fresh instance (none: an empty
//                       body): internal state left on instances is reachable by
//                       workers, and differs
// Symbols are listed by their description ([Symbol.iterator]). What heapprof
// leaves out on purpose (big APIs, what a newer V8 adds) is in compare.mjs's
// allow-list, with why; the classes heapprof does not offer have no route.
const kind = d => ('value' in d ? typeof d.value : `${d.get ? 'get' : ''}${d.set ? 'set' : ''}`);
const keyName = k => (typeof k === 'symbol' ? `[${k.description}]` : k);
const own = (o, prefix = '') => Reflect.ownKeys(o).map(k => `${prefix}${keyName(k)} ${kind(Object.getOwnPropertyDescriptor(o, k))}`);
// An object's properties up its chain (Object.prototype's left out), the nearest of each name.
function chain(o) {
  const seen = new Map();
  for (let p = o; p && p !== Object.prototype; p = Object.getPrototypeOf(p)) {
    for (const k of Reflect.ownKeys(p)) if (!seen.has(keyName(k))) seen.set(keyName(k), kind(Object.getOwnPropertyDescriptor(p, k)));
  }
  return [...seen].map(([name, what]) => `${name} ${what}`);
}
const sorted = lines => lines.sort().join('\n');

// What /instance/NAME builds.
const instances = {
  Request: () => new Request('https://a.example/'),
  Response: () => new Response('x'),
  Headers: () => new Headers({ a: '1' }),
  URL: () => new URL('https://a.example/?q=1'),
  URLSearchParams: () => new URLSearchParams('a=1'),
  Blob: () => new Blob(['x']),
  File: () => new File(['x'], 'f.txt'),
  FormData: () => { const f = new FormData(); f.append('a', '1'); return f; },
  TextEncoder: () => new TextEncoder(),
  TextDecoder: () => new TextDecoder(),
  AbortController: () => new AbortController(),
  AbortSignal: () => new AbortController().signal,
  Event: () => new Event('x'),
  CustomEvent: () => new CustomEvent('x', { detail: 1 }),
  ErrorEvent: () => new ErrorEvent('error', { message: 'm' }),
  MessageEvent: () => new MessageEvent('message', { data: 1 }),
  CloseEvent: () => new CloseEvent('close', { code: 1000 }),
  CryptoKey: () => crypto.subtle.importKey('raw', new Uint8Array(16), 'AES-GCM', true, ['encrypt']),
  EventTarget: () => new EventTarget(),
  DOMException: () => new DOMException('m', 'AbortError'),
  ReadableStream: () => new ReadableStream(),
  ReadableStreamDefaultReader: () => new ReadableStream().getReader(),
  WritableStream: () => new WritableStream(),
  WritableStreamDefaultWriter: () => new WritableStream().getWriter(),
  TransformStream: () => new TransformStream(),
  CompressionStream: () => new CompressionStream('gzip'),
  DecompressionStream: () => new DecompressionStream('gzip'),
  TextEncoderStream: () => new TextEncoderStream(),
  TextDecoderStream: () => new TextDecoderStream(),
  URLPattern: () => new URLPattern({ pathname: '/a/:b' }),
  ByteLengthQueuingStrategy: () => new ByteLengthQueuingStrategy({ highWaterMark: 1 }),
  CountQueuingStrategy: () => new CountQueuingStrategy({ highWaterMark: 1 }),
};

export default {
  async fetch(request) {
    const path = decodeURIComponent(new URL(request.url).pathname);
    let m;
    if (path === '/globals') {
      const seen = new Map();
      for (let p = globalThis; p && p !== Object.prototype; p = Object.getPrototypeOf(p)) {
        for (const k of Reflect.ownKeys(p)) if (!seen.has(keyName(k))) seen.set(keyName(k), typeof globalThis[k]);
      }
      return new Response(sorted([...seen].map(([name, type]) => `${name} ${type}`)));
    }
    if ((m = /^\/class\/(\w+)$/.exec(path))) {
      const c = globalThis[m[1]];
      if (typeof c !== 'function') return new Response(`(no ${m[1]})`);
      return new Response(sorted([...own(c, 'static '), ...(c.prototype ? own(c.prototype, 'prototype ') : ['(no prototype)'])]));
    }
    if ((m = /^\/object\/([\w.]+)$/.exec(path))) {
      const o = m[1].split('.').reduce((o, k) => o?.[k], globalThis);
      if (o === null || typeof o !== 'object') return new Response(`(${m[1]} is ${o === null ? 'null' : typeof o})`);
      return new Response(sorted(chain(o)));
    }
    if ((m = /^\/instance\/(\w+)$/.exec(path)) && instances[m[1]]) {
      let o;
      try { o = await instances[m[1]](); } catch (e) { return new Response(`${e.name}: ${e.message}`); }
      return new Response(sorted(own(o)));
    }
    return new Response('no such probe', { status: 404 });
  },
};
