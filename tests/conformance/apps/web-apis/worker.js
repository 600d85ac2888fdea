// Not a framework: the Web API behaviours frameworks lean on, one route each
// (/<name>), so a difference from workerd names the API. What the embedded
// runtime does not offer yet (legacy TextDecoder labels, HTMLRewriter, WebSocketPair, RSA/ECDSA/AES in crypto.subtle) is left out.
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
  'structured-clone': () => { const c = structuredClone(new Map([[1, { d: new Date(0), s: new Set([1]) }]])); return [c.get(1).d.toISOString(), [...c.get(1).s]]; },
  'structured-clone-function': () => structuredClone(() => 1),
  'text-decoder-fatal': () => new TextDecoder('utf-8', { fatal: true }).decode(new Uint8Array([0xff])),
  'text-decoder-bom': () => [new TextDecoder().decode(new Uint8Array([0xef, 0xbb, 0xbf, 0x61])), new TextDecoder('utf-8', { ignoreBOM: true }).decode(new Uint8Array([0xef, 0xbb, 0xbf, 0x61])).length],
  'text-encoder-into': () => { const d = new Uint8Array(4); return new TextEncoder().encodeInto('a✓b', d); },
  'url-search-params': () => { const u = new URL('https://a.example/p?x=1&y=%20z#h'); u.searchParams.append('k', 'v w'); return [u.href, u.search, u.hash, [...u.searchParams]]; },
  'url-search-params-object': () => new URLSearchParams({ a: 'b c', d: 'é', e: '~*' }).toString(),
  'request-init': async () => { const r = new Request('https://a.example/x', { method: 'post', body: JSON.stringify({ a: 1 }), headers: { 'content-type': 'application/json' } }); return [r.method, r.url, await r.json(), r.headers.get('content-type')]; },
  'request-get-body': () => new Request('https://a.example/', { method: 'GET', body: 'x' }).method,
  'request-received': request => [request.method, request.redirect, typeof request.signal, request.integrity, request.keepalive],
  'body-used': async () => { const r = new Response('abc'); await r.text(); return [r.bodyUsed, await r.text().catch(e => e.name)]; },
  'blob': async () => { const b = new Blob(['ab', new Uint8Array([99])], { type: 'Text/Plain' }); return [b.size, b.type, await b.text(), await b.slice(1, 2).text()]; },
  'file': () => { const f = new File(['x'], 'a.txt', { type: 'text/plain', lastModified: 5 }); return [f.name, f.size, f.type, f.lastModified]; },
  'abort': () => { const c = new AbortController(); c.abort(); return [c.signal.aborted, c.signal.reason.name, c.signal.reason.message]; },
  'custom-event': () => { const t = new EventTarget(); let got = null; t.addEventListener('ping', e => { got = e.detail; }); t.dispatchEvent(new CustomEvent('ping', { detail: 7 })); return got; },
  'digest': async () => [...new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode('x')))].slice(0, 4),
  'hmac': async () => { const k = await crypto.subtle.importKey('raw', new TextEncoder().encode('k'), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']); return [...new Uint8Array(await crypto.subtle.sign('HMAC', k, new TextEncoder().encode('m')))].slice(0, 4); },
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
