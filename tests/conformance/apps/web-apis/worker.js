// Not a framework: the Web API behaviours frameworks lean on, one route each
// (/<name>), so a difference from workerd names the API. What the embedded
// runtime does not offer yet (legacy TextDecoder labels, WebSocketPair,
// AES-KW in crypto.subtle: docs/runtime.md) is left out; HTMLRewriter has
// its own app (apps/htmlrewriter).
// Compression streams, compared by what does not depend on where a runtime
// cuts its output pieces: the bytes, the errors, and output arriving before
// the input ends.
const zipped = async (format, bytes) => new Uint8Array(await new Response(new Response(bytes).body.pipeThrough(new CompressionStream(format))).arrayBuffer());
// Writes `chunks` through a writer while reading; what each write, the close and the read saw.
async function feed(stream, chunks) {
  const writer = stream.writable.getWriter();
  const reading = (async () => {
    let total = 0;
    try { for await (const piece of stream.readable) total += piece.length; return total; } catch (e) { return `${e.name}: ${e.message}`; }
  })();
  const writes = [];
  for (const chunk of chunks) writes.push(await writer.write(chunk).then(() => 'ok', e => `${e.name}: ${e.message}`));
  const close = await writer.close().then(() => 'closed', e => `${e.name}: ${e.message}`);
  return [writes[0], writes[writes.length - 1], writes[0] === 'ok' && writes[writes.length - 1] === 'ok' ? close : '(after an error)', await reading];
}
const slices = (bytes, size) => Array.from({ length: Math.ceil(bytes.length / size) }, (_, i) => bytes.slice(i * size, (i + 1) * size));
const sample = new TextEncoder().encode(Array.from({ length: 3000 }, (_, i) => `line ${i}: ${(i * 7919) % 1009}`).join('\n'));

// crypto.subtle's probes answer known vectors (RFC 6070 PBKDF2, RFC 5869
// HKDF, NIST AES-GCM), the shapes of keys and the errors of misuse; random
// outputs (generated keys, ECDSA/PSS signatures) are reported by what they
// verify or by their size.
const subtle = crypto.subtle;
const hex = buffer => [...new Uint8Array(buffer)].map(b => b.toString(16).padStart(2, '0')).join('');
const unhex = text => new Uint8Array(text.match(/../g).map(h => parseInt(h, 16)));
const utf8 = text => new TextEncoder().encode(text);
const outcome = async f => { try { const v = await f(); return v instanceof ArrayBuffer ? hex(v) : v; } catch (e) { return `${e.name}: ${e.message}`; } };
const keyShape = k => ({ type: k.type, algorithm: { ...k.algorithm, ...(k.algorithm.publicExponent ? { publicExponent: [...k.algorithm.publicExponent] } : {}) }, extractable: k.extractable, usages: k.usages });
const rsaParams = (name, hash = 'SHA-256') => ({ name, hash, modulusLength: 1024, publicExponent: new Uint8Array([1, 0, 1]) });
const aesKey = (name, bytes, usages = ['encrypt', 'decrypt']) => subtle.importKey('raw', bytes, name, true, usages);
const probes = {
  'response-error': () => { const r = Response.error(); return [r.status, r.type]; },
  'response-status-text': () => new Response(null, { status: 404 }).statusText,
  'response-bad-status': () => new Response(null, { status: 99 }).status,
  'response-json': async () => { const r = Response.json({ a: 1 }, { status: 201, headers: { 'x-a': '1' } }); return [r.status, [...r.headers], await r.text()]; },
  'response-props': () => { const r = new Response('x'); return [r.type, r.url, r.redirected, r.ok]; },
  'header-value-newline': () => new Headers({ a: 'x\ny' }).get('a'),
  'header-value-trim': () => new Headers({ a: ' \t x y \r\n' }).get('a'),
  'headers-set-cookie': () => { const h = new Headers(); h.append('Set-Cookie', 'a=1'); h.append('set-cookie', 'b=2'); h.append('x', '1'); h.append('X', '2'); return [[...h], h.getSetCookie(), h.get('set-cookie')]; },
  'headers-immutable': request => { try { request.headers.set('x', '1'); return 'ok'; } catch (e) { return `${e.name}: ${e.message}`; } },
  'atob-invalid': () => atob('***'),
  'btoa-non-latin1': () => btoa('é✓'),
  'atob-btoa': () => [btoa('hi\u00ff'), atob(' aGk= ')],
  'atob-forgiving': () => ['', 'YQ', 'YWI', 'YWJj', 'YQ==', 'YWI=', ' Y W\tJ\nj\f\r', null, 12345678, 'YQ=', 'YQ===', 'Y', 'YQ==YQ==', 'YQ-A', 'YQ_A', '\u00e9AAA', 'YWJ\u2713']
    .map((input) => { try { return [...atob(input)].map((c) => c.charCodeAt(0)); } catch (e) { return `${e.name}`; } }),
  'btoa-lengths': () => ['', 'a', 'ab', 'abc', 'abcd', '\u0000\u00ff\u0080', null, undefined, 42, '\ud800'].map((input) => { try { return btoa(input); } catch (e) { return `${e.name}`; } }),
  'structured-clone': () => { const c = structuredClone(new Map([[1, { d: new Date(0), s: new Set([1]) }]])); return [c.get(1).d.toISOString(), [...c.get(1).s]]; },
  'structured-clone-function': () => structuredClone(() => 1),
  'text-decoder-fatal': () => new TextDecoder('utf-8', { fatal: true }).decode(new Uint8Array([0xff])),
  'text-decoder-bom': () => [new TextDecoder().decode(new Uint8Array([0xef, 0xbb, 0xbf, 0x61])), new TextDecoder('utf-8', { ignoreBOM: true }).decode(new Uint8Array([0xef, 0xbb, 0xbf, 0x61])).length],
  'text-encoder-into': () => { const d = new Uint8Array(4); return new TextEncoder().encodeInto('a✓b', d); },
  'url-search-params': () => { const u = new URL('https://a.example/p?x=1&y=%20z#h'); u.searchParams.append('k', 'v w'); return [u.href, u.search, u.hash, [...u.searchParams]]; },
  'url-search-params-object': () => new URLSearchParams({ a: 'b c', d: 'é', e: '~*' }).toString(),
  'url-encode-sets': () => ["https://a.example/it's?q='x'#'", 'https://a.example/\u{1F600}?e=\u{1F600}#\u{1F600}', 'https://a.example/\ud800x?\udc00'].map((u) => new URL(u).href),
  'url-search-params-loose': () => [[...new URLSearchParams('a=%C3%A9%ZZ%FF&b=%&c=%E2%82')], new URLSearchParams([['lone\ud800', 'v\udc00'], ['emoji', '\u{1F600}']]).toString()],
  'request-init': async () => { const r = new Request('https://a.example/x', { method: 'post', body: JSON.stringify({ a: 1 }), headers: { 'content-type': 'application/json' } }); return [r.method, r.url, await r.json(), r.headers.get('content-type')]; },
  'request-get-body': () => new Request('https://a.example/', { method: 'GET', body: 'x' }).method,
  'request-received': request => [request.method, request.redirect, typeof request.signal, request.integrity, request.keepalive],
  'body-used': async () => { const r = new Response('abc'); await r.text(); return [r.bodyUsed, await r.text().catch(e => e.name)]; },
  'blob': async () => { const b = new Blob(['ab', new Uint8Array([99])], { type: 'Text/Plain' }); return [b.size, b.type, await b.text(), await b.slice(1, 2).text()]; },
  'file': () => { const f = new File(['x'], 'a.txt', { type: 'text/plain', lastModified: 5 }); return [f.name, f.size, f.type, f.lastModified]; },
  'abort': () => { const c = new AbortController(); c.abort(); return [c.signal.aborted, c.signal.reason.name, c.signal.reason.message]; },
  'event-dispatch': () => {
    const target = new EventTarget();
    const log = [];
    target.addEventListener('x', e => { log.push(e.eventPhase, e.target === target, e.currentTarget === target, e.composedPath().length, e.cancelable); e.stopImmediatePropagation(); log.push(e.cancelBubble); });
    target.addEventListener('x', () => log.push('second listener'));
    target.onx = e => log.push('onx', e.type);
    const e = new Event('x', { cancelable: true, bubbles: true });
    log.push(e.eventPhase, e.target, e.isTrusted, e.timeStamp, e.bubbles, e.composed);
    log.push(target.dispatchEvent(e), e.eventPhase, e.currentTarget === target, e.composedPath().length, e.returnValue);
    const stopped = new Event('y');
    stopped.stopPropagation();
    const cancelled = new Event('z', { cancelable: true });
    cancelled.preventDefault();
    log.push(stopped.cancelBubble, cancelled.defaultPrevented, cancelled.returnValue, Object.keys(e).length);
    try { new Event(); } catch (err) { log.push(err.name); }
    return log;
  },
  'abort-onabort': () => { const c = new AbortController(); const log = []; c.signal.onabort = e => log.push('onabort', e.type); c.signal.addEventListener('abort', () => log.push('listener')); c.signal.onabort = c.signal.onabort; c.abort(); c.abort(); return [log, typeof c.signal.onabort]; },
  'dom-exception-codes': () => { const e = new DOMException('m', 'TimeoutError'); return [e.name, e.code, e.message, new DOMException('m').code, new DOMException('m', 'Nope').code, DOMException.ABORT_ERR, e.DATA_CLONE_ERR, e instanceof Error, String(e)]; },
  'global-classes': () => {
    const construct = C => { try { new C(); return 'constructed'; } catch (e) { return `${e.name}: ${e.message}`; } };
    return [crypto instanceof Crypto, crypto.subtle instanceof SubtleCrypto, navigator instanceof Navigator, caches instanceof CacheStorage,
      caches.default instanceof Cache, [Crypto, SubtleCrypto, Navigator, Cache, CacheStorage].map(construct),
      self === globalThis, origin, typeof WeakRef, typeof FinalizationRegistry, navigator.platform, performance.timeOrigin,
      Object.prototype.toString.call(console), Object.getPrototypeOf(performance).constructor.name, Object.getPrototypeOf(scheduler).constructor.name,
      new TextEncoderStream() instanceof TransformStream, new TextDecoderStream() instanceof TransformStream];
  },
  'timing-safe-equal': () => ['ab', 'ax', 'abc'].map(t => { try { return crypto.subtle.timingSafeEqual(utf8('ab'), utf8(t)); } catch (e) { return `${e.name}: ${e.message}`; } })
    .concat([(() => { try { return crypto.subtle.timingSafeEqual('ab', utf8('ab')); } catch (e) { return `${e.name}: ${e.message}`; } })(), crypto.subtle.timingSafeEqual(new ArrayBuffer(2), new DataView(new ArrayBuffer(2)))]),
  'remove-event-listener': () => { const listener = () => {}; addEventListener('fetch', listener); removeEventListener('fetch', listener); return typeof removeEventListener; },
  'small-statics': async () => {
    const attempt = f => { try { return f(); } catch (e) { return `${e.name}: ${e.message}`; } };
    const h = new Headers([['set-cookie', 'a=1'], ['Set-Cookie', 'b=2'], ['x', '1']]);
    const cached = [() => caches.has('x'), () => caches.default.keys(), () => caches.default.add('https://a.example/')].map(attempt);
    const withCf = new Response('x', { cf: { cacheTtl: 5 } });
    return [h.getAll('SET-COOKIE'), attempt(() => h.getAll('x')), URL.parse('/b?c', 'https://a.example/a')?.href, URL.parse('nope'),
      attempt(() => URL.createObjectURL(new Blob(['x']))), attempt(() => URL.revokeObjectURL('blob:x')), cached,
      withCf.cf, withCf.clone().cf, new Response('x').cf, new Response('x').webSocket];
  },
  'event-classes': () => {
    const attempt = f => { try { return f(); } catch (e) { return `${e.name}: ${e.message}`; } };
    const shape = e => Object.fromEntries(['type', 'message', 'filename', 'lineno', 'colno', 'error', 'data', 'ports', 'source', 'lastEventId', 'origin', 'code', 'reason', 'wasClean'].filter(k => k in e).map(k => [k, e[k] === undefined ? '(undefined)' : e[k]]));
    return [shape(new ErrorEvent('error', { message: 'm', filename: 'f.js', lineno: 3, colno: 4, error: 5 })), shape(new ErrorEvent('error')),
      shape(new MessageEvent('message', { data: { a: 1 } })), shape(new MessageEvent('message')), shape(new MessageEvent('message', { data: 1, lastEventId: 7, origin: 'https://o.example' })), Object.keys(new MessageEvent('m', { data: 1 })),
      shape(new CloseEvent('close', { code: 1000, reason: 'bye', wasClean: true })), shape(new CloseEvent('close')),
      new ErrorEvent('e') instanceof Event, new CloseEvent('c') instanceof Event,
      attempt(() => new ExtendableEvent('x')), attempt(() => new FetchEvent('fetch'))];
  },
  'custom-event': () => { const t = new EventTarget(); let got = null; t.addEventListener('ping', e => { got = e.detail; }); t.dispatchEvent(new CustomEvent('ping', { detail: 7 })); return got; },
  'digest': async () => [...new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode('x')))].slice(0, 4),
  'hmac': async () => { const k = await crypto.subtle.importKey('raw', new TextEncoder().encode('k'), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']); return [...new Uint8Array(await crypto.subtle.sign('HMAC', k, new TextEncoder().encode('m')))].slice(0, 4); },
  'subtle-pbkdf2-rfc6070': async () => { const k = await subtle.importKey('raw', utf8('password'), 'PBKDF2', false, ['deriveBits']); return Promise.all([1, 4096].map(async n => hex(await subtle.deriveBits({ name: 'PBKDF2', hash: 'SHA-1', salt: utf8('salt'), iterations: n }, k, 160)))); },
  'subtle-hkdf-rfc5869': async () => { const k = await subtle.importKey('raw', unhex('0b'.repeat(22)), 'HKDF', false, ['deriveBits']); return hex(await subtle.deriveBits({ name: 'HKDF', hash: 'SHA-256', salt: unhex('000102030405060708090a0b0c'), info: unhex('f0f1f2f3f4f5f6f7f8f9') }, k, 336)); },
  'subtle-aes-gcm-nist': async () => { const k = await aesKey('AES-GCM', unhex('feffe9928665731c6d6a8f9467308308')); const iv = unhex('cafebabefacedbaddecaf888'); const pt = unhex('d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39'); const aad = unhex('feedfacedeadbeeffeedfacedeadbeefabaddad2'); const c = await subtle.encrypt({ name: 'AES-GCM', iv, additionalData: aad }, k, pt); return [hex(c), hex(await subtle.decrypt({ name: 'AES-GCM', iv, additionalData: aad }, k, c)) === hex(pt), await outcome(() => subtle.decrypt({ name: 'AES-GCM', iv, additionalData: aad, tagLength: 96 }, k, c))]; },
  'subtle-aes-gcm-errors': async () => { const k = await aesKey('AES-GCM', new Uint8Array(16)); return Promise.all([() => subtle.encrypt({ name: 'AES-GCM' }, k, new Uint8Array(3)), () => subtle.encrypt({ name: 'AES-GCM', iv: new Uint8Array(0) }, k, new Uint8Array(3)), () => subtle.encrypt({ name: 'AES-GCM', iv: new Uint8Array(12), tagLength: 100 }, k, new Uint8Array(3)), () => subtle.decrypt({ name: 'AES-GCM', iv: new Uint8Array(12) }, k, new Uint8Array(20)), () => subtle.decrypt({ name: 'AES-GCM', iv: new Uint8Array(12) }, k, new Uint8Array(5)), () => subtle.encrypt({ name: 'AES-CBC', iv: new Uint8Array(16) }, k, new Uint8Array(3)), () => subtle.sign('HMAC', k, new Uint8Array(1))].map(outcome)); },
  'subtle-aes-cbc': async () => { const k = await aesKey('AES-CBC', unhex('2b7e151628aed2a6abf7158809cf4f3c')); const iv = unhex('000102030405060708090a0b0c0d0e0f'); const c = await subtle.encrypt({ name: 'AES-CBC', iv }, k, unhex('6bc1bee22e409f96e93d7e117393172a')); return [hex(c), hex(await subtle.decrypt({ name: 'AES-CBC', iv }, k, c)), ...(await Promise.all([() => subtle.decrypt({ name: 'AES-CBC', iv: new Uint8Array(8) }, k, c), () => subtle.decrypt({ name: 'AES-CBC', iv }, k, new Uint8Array(16)), () => subtle.decrypt({ name: 'AES-CBC', iv }, k, new Uint8Array(15))].map(outcome)))]; },
  'subtle-aes-ctr-wrap': async () => { const k = await aesKey('AES-CTR', unhex('2b7e151628aed2a6abf7158809cf4f3c')); const counter = unhex('f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff'); return Promise.all([() => subtle.encrypt({ name: 'AES-CTR', counter, length: 128 }, k, new Uint8Array(40)), () => subtle.encrypt({ name: 'AES-CTR', counter, length: 4 }, k, new Uint8Array(40)), () => subtle.encrypt({ name: 'AES-CTR', counter, length: 0 }, k, new Uint8Array(3)), () => subtle.encrypt({ name: 'AES-CTR', counter: new Uint8Array(8), length: 64 }, k, new Uint8Array(3))].map(outcome)); },
  'subtle-aes-keys': async () => [keyShape(await aesKey('AES-GCM', new Uint8Array(32))), await outcome(async () => JSON.stringify(await subtle.exportKey('jwk', await aesKey('AES-CTR', new Uint8Array(24))))), ...(await Promise.all([() => aesKey('AES-GCM', new Uint8Array(16), ['sign']), () => aesKey('AES-GCM', new Uint8Array(15)), () => aesKey('AES-GCM', new Uint8Array(16), []), () => subtle.generateKey({ name: 'AES-GCM', length: 100 }, true, ['encrypt']), () => subtle.importKey('jwk', { kty: 'oct', k: 'AAAAAAAAAAAAAAAAAAAAAA', alg: 'A256GCM' }, 'AES-GCM', true, ['encrypt']), () => subtle.importKey('raw', new Uint8Array(16), 'FOO', true, ['encrypt']), async () => subtle.exportKey('raw', await subtle.importKey('raw', new Uint8Array(16), 'AES-CBC', false, ['decrypt']))].map(outcome)))],
  'subtle-pbkdf2-derive': async () => { const k = await subtle.importKey('raw', utf8('pw'), 'PBKDF2', false, ['deriveBits', 'deriveKey']); const p = { name: 'PBKDF2', hash: 'SHA-256', salt: utf8('salt'), iterations: 1000 }; const aes = await subtle.deriveKey(p, k, { name: 'AES-GCM', length: 256 }, true, ['encrypt']); const hmac = await subtle.deriveKey(p, k, { name: 'HMAC', hash: 'SHA-256' }, true, ['sign']); return [keyShape(k), keyShape(aes), hex(await subtle.exportKey('raw', aes)), keyShape(hmac), ...(await Promise.all([() => subtle.importKey('raw', utf8('pw'), 'PBKDF2', true, ['deriveBits']), () => subtle.importKey('jwk', {}, 'PBKDF2', false, ['deriveBits']), () => subtle.deriveBits({ ...p, iterations: 0 }, k, 256), () => subtle.deriveBits(p, k, 7), () => subtle.deriveBits(p, k, null), () => subtle.deriveBits(p, k, 0), () => subtle.deriveKey(p, k, { name: 'AES-GCM' }, true, ['encrypt'])].map(outcome)))]; },
  'subtle-hkdf-errors': async () => { const k = await subtle.importKey('raw', utf8('ikm'), 'HKDF', false, ['deriveBits']); return [keyShape(k), ...(await Promise.all([() => subtle.deriveBits({ name: 'HKDF', hash: 'SHA-256', salt: new Uint8Array(4) }, k, 256), () => subtle.deriveBits({ name: 'HKDF', hash: 'SHA-256', salt: new Uint8Array(4), info: new Uint8Array(0) }, k, 255 * 256 + 8), () => subtle.deriveKey({ name: 'HKDF', hash: 'SHA-256', salt: new Uint8Array(4), info: new Uint8Array(0) }, k, { name: 'AES-GCM', length: 128 }, true, ['encrypt'])].map(outcome)))]; },
  'subtle-rsa-keys': async () => { const k = await subtle.generateKey(rsaParams('RSASSA-PKCS1-v1_5'), true, ['sign', 'verify']); const spki = await subtle.exportKey('spki', k.publicKey); const jwk = await subtle.exportKey('jwk', k.privateKey); return [keyShape(k.publicKey), keyShape(k.privateKey), Object.keys(await subtle.exportKey('jwk', k.publicKey)), Object.keys(jwk), jwk.alg, ...(await Promise.all([() => subtle.importKey('spki', spki, { name: 'ECDSA', namedCurve: 'P-256' }, true, ['verify']), () => subtle.importKey('spki', spki, { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' }, true, ['sign']), () => subtle.importKey('spki', new Uint8Array(10), { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' }, true, ['verify']), () => subtle.importKey('pkcs8', new Uint8Array(10), { name: 'RSA-PSS', hash: 'SHA-256' }, true, ['sign']), () => subtle.importKey('spki', spki, { name: 'RSASSA-PKCS1-v1_5' }, true, ['verify']), () => subtle.importKey('raw', spki, { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' }, true, ['verify']), () => subtle.sign('RSASSA-PKCS1-v1_5', k.publicKey, new Uint8Array(1)), () => subtle.exportKey('spki', k.privateKey), () => subtle.exportKey('raw', k.publicKey), () => subtle.verify('RSASSA-PKCS1-v1_5', k.publicKey, new Uint8Array(3), new Uint8Array(1)), () => subtle.generateKey(rsaParams('RSASSA-PKCS1-v1_5'), true, ['encrypt']), () => subtle.importKey('jwk', { ...jwk, alg: 'PS256' }, { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' }, true, ['sign'])].map(outcome)))]; },
  'subtle-rsa-sign-verify': async () => { const data = utf8('signed'); return Promise.all([['RSASSA-PKCS1-v1_5', {}], ['RSA-PSS', { saltLength: 32 }], ['RSA-PSS', { saltLength: 0 }]].map(async ([name, extra]) => { const k = await subtle.generateKey(rsaParams(name, 'SHA-384'), false, ['sign', 'verify']); const sig = await subtle.sign({ name, ...extra }, k.privateKey, data); const pkcs1Again = name === 'RSASSA-PKCS1-v1_5' ? hex(sig) === hex(await subtle.sign(name, k.privateKey, data)) : null; return [name, sig.byteLength, pkcs1Again, await subtle.verify({ name, ...extra }, k.publicKey, sig, data), await subtle.verify({ name, ...extra }, k.publicKey, sig, utf8('other')), await outcome(async () => (await subtle.sign({ name }, k.privateKey, data)).byteLength)]; })); },
  'subtle-rsa-oaep': async () => { const k = await subtle.generateKey(rsaParams('RSA-OAEP'), true, ['encrypt', 'decrypt']); const label = utf8('label'); const c = await subtle.encrypt({ name: 'RSA-OAEP', label }, k.publicKey, utf8('secret')); return [keyShape(k.publicKey), c.byteLength, new TextDecoder().decode(await subtle.decrypt({ name: 'RSA-OAEP', label }, k.privateKey, c)), await outcome(() => subtle.decrypt({ name: 'RSA-OAEP' }, k.privateKey, c)), (await subtle.exportKey('jwk', k.publicKey)).alg]; },
  'subtle-ecdsa': async () => { const k = await subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-384' }, true, ['sign', 'verify']); const data = utf8('signed'); const sig = await subtle.sign({ name: 'ECDSA', hash: 'SHA-384' }, k.privateKey, data); const raw = await subtle.exportKey('raw', k.publicKey); const again = await subtle.importKey('raw', raw, { name: 'ECDSA', namedCurve: 'P-384' }, true, ['verify']); const jwk = await subtle.exportKey('jwk', k.privateKey); const fromJwk = await subtle.importKey('jwk', jwk, { name: 'ECDSA', namedCurve: 'P-384' }, false, ['sign']); const sig2 = await subtle.sign({ name: 'ECDSA', hash: 'SHA-256' }, fromJwk, data); return [keyShape(k.publicKey), keyShape(k.privateKey), sig.byteLength, raw.byteLength, Object.keys(jwk), await subtle.verify({ name: 'ECDSA', hash: 'SHA-384' }, again, sig, data), await subtle.verify({ name: 'ECDSA', hash: 'SHA-256' }, again, sig2, data), await subtle.verify({ name: 'ECDSA', hash: 'SHA-256' }, again, sig, data), await subtle.verify({ name: 'ECDSA', hash: 'SHA-384' }, again, sig.slice(1), data), ...(await Promise.all([() => subtle.sign({ name: 'ECDSA' }, k.privateKey, data), () => subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-999' }, true, ['sign']), () => subtle.importKey('raw', raw, { name: 'ECDSA', namedCurve: 'P-256' }, true, ['verify']), () => subtle.importKey('jwk', { ...jwk, x: 'AAAA' }, { name: 'ECDSA', namedCurve: 'P-384' }, true, ['sign']), () => subtle.importKey('jwk', jwk, { name: 'RSA-PSS', hash: 'SHA-256' }, true, ['sign'])].map(outcome)))]; },
  'subtle-ecdh': async () => { const a = await subtle.generateKey({ name: 'ECDH', namedCurve: 'P-256' }, true, ['deriveBits', 'deriveKey']); const b = await subtle.generateKey({ name: 'ECDH', namedCurve: 'P-256' }, true, ['deriveBits']); const ecdsa = await subtle.generateKey({ name: 'ECDSA', namedCurve: 'P-256' }, true, ['sign']); const ab = await subtle.deriveBits({ name: 'ECDH', public: b.publicKey }, a.privateKey, 256); const ba = await subtle.deriveBits({ name: 'ECDH', public: a.publicKey }, b.privateKey, null); const key = await subtle.deriveKey({ name: 'ECDH', public: b.publicKey }, a.privateKey, { name: 'AES-GCM', length: 128 }, true, ['encrypt']); return [keyShape(a.publicKey), keyShape(a.privateKey), hex(ab) === hex(ba), hex(await subtle.exportKey('raw', key)) === hex(ab).slice(0, 32), await subtle.deriveBits({ name: 'ECDH', public: b.publicKey }, a.privateKey, 12).then(bits => [bits.byteLength, new Uint8Array(bits)[1] & 0x0f]), ...(await Promise.all([() => subtle.deriveBits({ name: 'ECDH', public: b.publicKey }, a.privateKey, 264), () => subtle.deriveBits({ name: 'ECDH', public: ecdsa.publicKey }, a.privateKey, 256), () => subtle.deriveBits({ name: 'ECDH' }, a.privateKey, 256)].map(outcome)))]; },
  'subtle-misc-errors': async () => { const k = await subtle.importKey('raw', utf8('k'), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']); return [Object.prototype.toString.call(k), Object.keys(k), keyShape(await subtle.generateKey({ name: 'HMAC', hash: 'SHA-384' }, true, ['sign'])), ...(await Promise.all([() => subtle.digest('SHA-3', new Uint8Array(1)), () => subtle.importKey('raw', new Uint8Array(3), { name: 'HMAC' }, true, ['sign']), () => subtle.sign('FOO', k, new Uint8Array(1)), () => subtle.verify('HMAC', k, new Uint8Array(32), new Uint8Array(1)), () => subtle.exportKey('raw', k)].map(outcome)))]; },
  'subtle-number-members': async () => { const pb = await subtle.importKey('raw', new Uint8Array(3), 'PBKDF2', false, ['deriveBits']); const p = { name: 'PBKDF2', hash: 'SHA-256', salt: new Uint8Array(4), iterations: 1 }; const k = await subtle.generateKey(rsaParams('RSA-PSS'), true, ['sign']); const gcm = await aesKey('AES-GCM', new Uint8Array(16)); const ctr = await aesKey('AES-CTR', new Uint8Array(16)); return Promise.all([() => subtle.deriveBits({ ...p, iterations: 'abc' }, pb, 256), () => subtle.deriveBits({ ...p, iterations: 2 ** 40 }, pb, 256), () => subtle.deriveBits({ ...p, iterations: -1 }, pb, 256), () => subtle.deriveBits(p, pb, 'abc'), () => subtle.deriveBits(p, pb, -8), () => subtle.deriveBits(p, pb, 16.5), async () => (await subtle.sign({ name: 'RSA-PSS', saltLength: 'x' }, k.privateKey, new Uint8Array(1))).byteLength, () => subtle.sign({ name: 'RSA-PSS', saltLength: -1 }, k.privateKey, new Uint8Array(1)), () => subtle.sign({ name: 'RSA-PSS', saltLength: 1000 }, k.privateKey, new Uint8Array(1)), () => subtle.generateKey({ ...rsaParams('RSA-PSS'), modulusLength: 'x' }, true, ['sign']), () => subtle.generateKey({ ...rsaParams('RSA-PSS'), modulusLength: 100 }, true, ['sign']), () => subtle.generateKey({ ...rsaParams('RSA-PSS'), publicExponent: new Uint8Array([2]) }, true, ['sign']), () => subtle.encrypt({ name: 'AES-GCM', iv: new Uint8Array(12), tagLength: 'x' }, gcm, new Uint8Array(1)), () => subtle.encrypt({ name: 'AES-CTR', counter: new Uint8Array(16), length: 'x' }, ctr, new Uint8Array(1))].map(outcome)); },
  'subtle-wrap-key': async () => { const wrapper = await aesKey('AES-GCM', new Uint8Array(32).fill(7), ['wrapKey', 'unwrapKey', 'encrypt']); const iv = new Uint8Array(12); const hmac = await subtle.importKey('raw', utf8('secret'), { name: 'HMAC', hash: 'SHA-256' }, true, ['sign']); const raw = await subtle.wrapKey('raw', hmac, wrapper, { name: 'AES-GCM', iv }); const jwk = await subtle.wrapKey('jwk', hmac, wrapper, { name: 'AES-GCM', iv }); const back = await subtle.unwrapKey('jwk', jwk, wrapper, { name: 'AES-GCM', iv }, { name: 'HMAC', hash: 'SHA-256' }, true, ['sign']); return [hex(raw), jwk.byteLength, keyShape(back), hex(await subtle.exportKey('raw', back)), ...(await Promise.all([() => subtle.wrapKey('raw', hmac, hmac, { name: 'HMAC' }), async () => subtle.wrapKey('raw', await subtle.importKey('raw', utf8('k'), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']), wrapper, { name: 'AES-GCM', iv }), async () => subtle.unwrapKey('raw', raw, await aesKey('AES-GCM', new Uint8Array(32).fill(7), ['decrypt']), { name: 'AES-GCM', iv }, { name: 'HMAC', hash: 'SHA-256' }, true, ['sign']), () => subtle.unwrapKey('raw', raw, wrapper, { name: 'AES-GCM', iv: new Uint8Array(12).fill(1) }, { name: 'HMAC', hash: 'SHA-256' }, true, ['sign'])].map(outcome)))]; },
  'uuid': () => /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(crypto.randomUUID()),
  'navigator': () => navigator.userAgent,
  'scheduler-wait': async () => { await scheduler.wait(1); return 'waited'; },
  'form-data-urlencoded': async () => { const f = await new Response('a=1&b=%C3%A9&a=2', { headers: { 'content-type': 'application/x-www-form-urlencoded' } }).formData(); return [...f]; },
  'streams-tee': async () => { const [a, b] = new Response('tee me').body.tee(); return [await new Response(a).text(), await new Response(b).text()]; },
  'compression-round-trip': async () => {
    const out = [];
    for (const format of ['gzip', 'deflate', 'deflate-raw']) {
      for (const size of [1, 7, 1000, 100000]) {
        const packed = new Uint8Array(await new Response(new Blob(slices(sample, size)).stream().pipeThrough(new CompressionStream(format))).arrayBuffer());
        const back = new Uint8Array(await new Response(new Blob(slices(packed, Math.max(1, size >> 2))).stream().pipeThrough(new DecompressionStream(format))).arrayBuffer());
        out.push(back.length === sample.length && back.every((x, i) => x === sample[i]));
      }
    }
    return out;
  },
  'compression-header-before-close': async () => { const cs = new CompressionStream('deflate'); cs.writable.getWriter().write(new TextEncoder().encode('hello')); return [...(await cs.readable.getReader().read()).value]; },
  'decompression-output-before-close': async () => {
    const packed = await zipped('gzip', new Uint8Array(4 << 20));
    const ds = new DecompressionStream('gzip');
    ds.writable.getWriter().write(packed.slice(0, packed.length >> 1));
    const first = await ds.readable.getReader().read();
    return [first.done, first.value.length > 0, first.value.every(x => x === 0)];
  },
  'decompression-large': async () => { const packed = await zipped('deflate', new Uint8Array(8 << 20).fill(7)); return feed(new DecompressionStream('deflate'), slices(packed, 100)); },
  'decompression-corrupt': () => feed(new DecompressionStream('gzip'), [new Uint8Array([31, 139, 8, 0, 0, 0, 0, 0, 0, 3, 255, 255, 255, 255])]),
  'decompression-bad-header': () => feed(new DecompressionStream('deflate'), [new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8])]),
  'decompression-truncated': async () => { const packed = await zipped('gzip', sample); return feed(new DecompressionStream('gzip'), slices(packed.slice(0, -4), 500)); },
  'decompression-empty': () => feed(new DecompressionStream('deflate-raw'), []),
  'decompression-trailing': async () => { const packed = await zipped('deflate', sample); return feed(new DecompressionStream('deflate'), [packed, new Uint8Array([0])]); },
  'decompression-trailing-in-chunk': async () => { const packed = await zipped('gzip', sample); const more = new Uint8Array(packed.length + 2); more.set(packed); return feed(new DecompressionStream('gzip'), [more]); },
  'compression-format-unsupported': () => new CompressionStream('brotli'),
  // workerd's byte streams and reportError.
  'identity-transform': async () => {
    const t = new IdentityTransformStream();
    const w = t.writable.getWriter();
    w.write(new Uint8Array([1, 2, 3])); w.write('\u00e9'); w.close();
    return Array.from(new Uint8Array(await new Response(t.readable).arrayBuffer()));
  },
  'fixed-length': async () => {
    const t = new FixedLengthStream(3);
    const w = t.writable.getWriter();
    w.write(new Uint8Array([1, 2])); w.write(new Uint8Array([3])); w.close();
    return Array.from(new Uint8Array(await new Response(t.readable).arrayBuffer()));
  },
  'fixed-length-short': async () => {
    const t = new FixedLengthStream(5);
    const w = t.writable.getWriter();
    const read = new Response(t.readable).arrayBuffer();
    await w.write(new Uint8Array([1]));
    await w.close();
    return read;
  },
  'fixed-length-long': async () => {
    const t = new FixedLengthStream(1);
    const w = t.writable.getWriter();
    const read = new Response(t.readable).arrayBuffer();
    await w.write(new Uint8Array([1, 2]));
    return read;
  },
  'fixed-length-negative': () => new FixedLengthStream(-1),
  'digest-stream': async () => {
    const d = new crypto.DigestStream('SHA-256');
    const w = d.getWriter();
    await w.write(new TextEncoder().encode('ab'));
    await w.write('c');
    await w.close();
    return [Array.from(new Uint8Array(await d.digest), b => b.toString(16).padStart(2, '0')).join(''), d instanceof WritableStream];
  },
  'digest-stream-unsupported': () => new crypto.DigestStream('SHA-3'),
  'report-error': () => {
    let seen = null;
    const listener = e => { seen = [e.constructor.name, e.type, e.message, e.error.message]; };
    addEventListener('error', listener);
    reportError(new TypeError('reported'));
    removeEventListener('error', listener);
    return seen;
  },
};

export default {
  async fetch(request) {
    const name = new URL(request.url).pathname.slice(1);
    const probe = probes[name];
    if (!probe) return Response.json({ probes: Object.keys(probes) }, { status: 404 });
    let value;
    try {
      value = await probe(request);
    } catch (e) {
      value = `${e.name}: ${e.message}`;
    }
    return Response.json({ [name]: value === undefined ? 'undefined' : value });
  },
};
