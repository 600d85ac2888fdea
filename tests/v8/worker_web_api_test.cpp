// The worker runtime's Web APIs on a real isolate, checked against published
// test vectors (FIPS 180 SHA-256, RFC 4231 HMAC) and the specs' behaviour.
#include <catch2/catch.hpp>

#include <chrono>
#include <string>

#include "heapprof/runtime/worker_runtime.h"

using namespace heapprof;

namespace {

// Runs `body` (the statements of an async function returning a value) inside
// a fetch handler and returns the JSON of what it returned.
std::string Evaluate(const std::string& body, std::vector<std::string>* console = nullptr) {
  WorkerOptions options;
  // These cases check what the APIs answer, not how fast: a slow machine or a
  // sanitizer build must not turn the default time limit into a failure.
  options.request_timeout = std::chrono::minutes(5);
  options.console = [console](std::string_view level, std::string_view text) {
    if (console) console->push_back(std::string(level) + ":" + std::string(text));
  };
  auto runtime = WorkerRuntime::Create(options);
  REQUIRE(runtime.ok());
  std::string source =
      "const hex = b => Array.from(new Uint8Array(b), x => x.toString(16).padStart(2, '0')).join('');\n"
      "export default { async fetch(request, env, ctx) {\n" +
      body + "\n} };\n";
  Status loaded = runtime->Load(source, "api.js");
  INFO(loaded.message());
  REQUIRE(loaded.ok());
  WorkerRequest request;
  request.url = "https://example.com/api?b=2&a=1";
  request.headers = {{"cf-ipcountry", "DE"}, {"X-Token", "abc"}};
  auto response = runtime->Dispatch(request);
  INFO(response.status().message());
  REQUIRE(response.ok());
  return response->body;
}

}  // namespace

TEST_CASE("web api: crypto.subtle digest and HMAC through OpenSSL match the published vectors") {
  std::string out = Evaluate(R"(
    const enc = new TextEncoder();
    const sha256 = hex(await crypto.subtle.digest('SHA-256', enc.encode('abc')));
    const sha1 = hex(await crypto.subtle.digest({ name: 'SHA-1' }, enc.encode('abc')));
    const key = await crypto.subtle.importKey('raw', enc.encode('Jefe'), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign', 'verify']);
    const data = enc.encode('what do ya want for nothing?');
    const mac = await crypto.subtle.sign('HMAC', key, data);
    const good = await crypto.subtle.verify('HMAC', key, mac, data);
    const bad = await crypto.subtle.verify('HMAC', key, new Uint8Array(32), data);
    const jwk = await crypto.subtle.importKey('jwk', { kty: 'oct', k: 'SmVmZQ' }, { name: 'HMAC', hash: { name: 'SHA-256' } }, true, ['sign']);
    const jwkMac = hex(await crypto.subtle.sign({ name: 'HMAC' }, jwk, data));
    let unsupported = '';
    try { await crypto.subtle.digest('SHA-3', data); } catch (e) { unsupported = e.name; }
    let noSign = '';
    const verifyOnly = await crypto.subtle.importKey('raw', enc.encode('k'), { name: 'HMAC', hash: 'SHA-1' }, false, ['verify']);
    try { await crypto.subtle.sign('HMAC', verifyOnly, data); } catch (e) { noSign = e.name; }
    return Response.json({ sha256, sha1, mac: hex(mac), good, bad, jwkMac, unsupported, noSign, algo: key.algorithm });
  )");
  CHECK_THAT(out, Catch::Contains(R"("sha256":"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")"));
  CHECK_THAT(out, Catch::Contains(R"("sha1":"a9993e364706816aba3e25717850c26c9cd0d89d")"));
  CHECK_THAT(out, Catch::Contains(R"("mac":"5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")"));
  CHECK_THAT(out, Catch::Contains(R"("jwkMac":"5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")"));
  CHECK_THAT(out, Catch::Contains(R"("good":true,"bad":false)"));
  CHECK_THAT(out, Catch::Contains(R"("unsupported":"NotSupportedError","noSign":"InvalidAccessError")"));
  CHECK_THAT(out, Catch::Contains(R"("algo":{"name":"HMAC","hash":{"name":"SHA-256"},"length":32})"));
}

TEST_CASE("web api: random values and UUIDs") {
  std::string out = Evaluate(R"(
    const a = crypto.getRandomValues(new Uint8Array(64));
    const b = crypto.getRandomValues(new Uint32Array(16));
    const uuids = new Set(Array.from({ length: 100 }, () => crypto.randomUUID()));
    const shaped = [...uuids].every(u => /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(u));
    let quota = '', floats = '';
    try { crypto.getRandomValues(new Uint8Array(65537)); } catch (e) { quota = e.name; }
    try { crypto.getRandomValues(new Float64Array(2)); } catch (e) { floats = e.name; }
    return Response.json({ differ: hex(a.slice(0, 32)) !== hex(a.slice(32)), nonzero: b.some(x => x !== 0),
                           unique: uuids.size, shaped, quota, floats });
  )");
  CHECK(
      out ==
      R"({"differ":true,"nonzero":true,"unique":100,"shaped":true,"quota":"QuotaExceededError","floats":"TypeMismatchError"})");
}

TEST_CASE("web api: text encoding, base64 and structured clone") {
  std::string out = Evaluate(R"(
    const bytes = new TextEncoder().encode('é€😀');
    const lone = new TextEncoder().encode('\ud800');
    const text = new TextDecoder().decode(new Uint8Array([0xef, 0xbb, 0xbf, 0x68, 0xff, 0x69]));
    let fatal = '';
    try { new TextDecoder('utf-8', { fatal: true }).decode(new Uint8Array([0xff])); } catch (e) { fatal = e.name; }
    const into = new Uint8Array(4);
    const result = new TextEncoder().encodeInto('a€b', into);
    const original = { when: new Date(0), map: new Map([[1, 'one']]), bytes: new Uint8Array([1, 2]), nested: { list: [1, 2] } };
    const copy = structuredClone(original);
    let cloneError = '';
    try { structuredClone({ f() {} }); } catch (e) { cloneError = e.name; }
    let atobError = '';
    try { atob('a'); } catch (e) { atobError = e.name; }
    return Response.json({
      bytes: hex(bytes), lone: hex(lone), text, fatal, into: [result.read, result.written, hex(into)],
      btoa: btoa('hello\xff'), atob: atob(' aGVs bG8= '), atobError,
      clone: [copy !== original, copy.when instanceof Date, copy.when.getTime(), copy.map.get(1), copy.bytes[1],
              copy.nested.list.length, copy.nested !== original.nested],
      cloneError,
    });
  )");
  CHECK(out == R"({"bytes":"c3a9e282acf09f9880","lone":"efbfbd","text":"h)"
               "\xef\xbf\xbd"
               R"(i","fatal":"TypeError",)"
               R"("into":[2,4,"61e282ac"],"btoa":"aGVsbG//","atob":"hello","atobError":"InvalidCharacterError",)"
               R"("clone":[true,true,0,"one",2,2,true],"cloneError":"DataCloneError"})");
}

TEST_CASE("web api: headers, bodies, clones and the request's cf") {
  std::string out = Evaluate(R"(
    const h = new Headers([['B', '2'], ['a', '1'], ['Set-Cookie', 'x=1'], ['set-cookie', 'y=2'], ['b', '3']]);
    let badName = '';
    try { h.set('bad name', 'v'); } catch (e) { badName = e.name; }
    const response = new Response(new Uint8Array([104, 105]), { headers: h });
    const copy = response.clone();
    const both = [await response.text(), hex(await copy.arrayBuffer())];
    let reuse = '';
    try { await response.text(); } catch (e) { reuse = e.name; }
    const req = request.clone();
    const post = new Request('https://example.com/x', { method: 'post', body: new URLSearchParams({ q: 'a b', r: '1' }) });
    const form = await post.formData();
    const blob = new Blob(['ab', new Uint8Array([99]), new Blob(['d'])], { type: 'Text/Plain' });
    const params = new URLSearchParams(new URL(request.url).search);
    params.set('c', 'x y'); params.sort();
    let getBody = '';
    try { new Request('https://example.com/', { body: 'x' }); } catch (e) { getBody = e.name; }
    return Response.json({
      entries: [...h], cookies: h.getSetCookie(), combined: h.get('b'), badName, both, reuse,
      cf: request.cf.country, colo: typeof request.cf.colo, token: req.headers.get('x-token'), cloneUrl: req.url,
      form: form.get('q'), postType: post.headers.get('content-type'),
      blob: [blob.size, blob.type, await blob.text(), await blob.slice(1, -1).text()],
      params: params.toString(), getBody,
      redirect: [Response.redirect('https://example.com/a', 301).status, Response.redirect('https://example.com/a').headers.get('location')],
    });
  )");
  CHECK(out ==
        R"({"entries":[["a","1"],["b","2, 3"],["set-cookie","x=1"],["set-cookie","y=2"]],)"
        R"("cookies":["x=1","y=2"],"combined":"2, 3","badName":"TypeError","both":["hi","6869"],"reuse":"TypeError",)"
        R"("cf":"DE","colo":"string","token":"abc","cloneUrl":"https://example.com/api?b=2&a=1",)"
        R"("form":"a b","postType":"application/x-www-form-urlencoded;charset=UTF-8",)"
        R"("blob":[4,"text/plain","abcd","bc"],"params":"a=1&b=2&c=x+y","getBody":"TypeError",)"
        R"("redirect":[301,"https://example.com/a"]})");
}

TEST_CASE("web api: timers, abort signals, caches and refused subrequests") {
  std::string out = Evaluate(R"(
    const ticks = [];
    await new Promise(resolve => {
      const id = setInterval(() => { ticks.push(performance.now()); if (ticks.length === 3) { clearInterval(id); resolve(); } }, 10);
    });
    const controller = new AbortController();
    let fired = 0;
    controller.signal.addEventListener('abort', () => fired++);
    controller.abort();
    controller.abort();
    const timeout = AbortSignal.timeout(5);
    await new Promise(resolve => setTimeout(resolve, 6));
    await caches.default.put('https://example.com/c', new Response('cached', { headers: { 'x-c': '1' } }));
    const hit = await caches.default.match('https://example.com/c');
    const miss = await caches.default.match('https://example.com/none');
    let refused = '';
    try { await fetch('https://api.example.com/v1'); } catch (e) { refused = e.message; }
    ctx.waitUntil(new Promise(resolve => setTimeout(resolve, 1000)).then(() => console.log('waited')));
    return Response.json({
      ticks, fired, aborted: controller.signal.aborted, reason: controller.signal.reason.name,
      timeout: [timeout.aborted, timeout.reason.name],
      hit: [await hit.text(), hit.headers.get('x-c')], miss: miss === undefined, refused,
    });
  )");
  CHECK_THAT(out, Catch::StartsWith(R"({"ticks":[10,20,30],"fired":1,"aborted":true,"reason":"AbortError",)"
                                    R"("timeout":[true,"TimeoutError"],"hit":["cached","1"],"miss":true,)"));
  CHECK_THAT(out, Catch::Contains("has no network"));
}

TEST_CASE("web api: ctx.waitUntil is awaited before the request counts as done") {
  std::vector<std::string> console;
  Evaluate(R"(
    ctx.waitUntil(new Promise(resolve => setTimeout(resolve, 1000)).then(() => console.log('waited')));
    return new Response('early');
  )",
           &console);
  CHECK(console == std::vector<std::string>{"log:waited"});
}

TEST_CASE("web api: env carries vars and in-memory KV namespaces") {
  WorkerOptions options;
  options.bindings.vars = {{"API_HOST", "\"api.example.com\""}, {"LIMITS", R"({"burst":10})"}, {"DEBUG", "false"}};
  options.bindings.kv = {{"CACHE", {{"user:1", R"({"name":"Ada"})"}, {"user:2", "Bob"}}}};
  auto runtime = WorkerRuntime::Create(options);
  REQUIRE(runtime.ok());
  REQUIRE(runtime
              ->Load(R"(
    export default { async fetch(request, env) {
      await env.CACHE.put('visits', String(Number(await env.CACHE.get('visits') ?? 0) + 1), { metadata: { by: 'test' } });
      const user = await env.CACHE.get('user:1', 'json');
      const listed = await env.CACHE.list({ prefix: 'user:' });
      const meta = await env.CACHE.getWithMetadata('visits');
      const bytes = new Uint8Array(await env.CACHE.get('user:2', { type: 'arrayBuffer' }));
      return Response.json({ host: env.API_HOST, burst: env.LIMITS.burst, debug: env.DEBUG, user: user.name,
                             listed: listed.keys.map(k => k.name), complete: listed.list_complete,
                             visits: meta.value, meta: meta.metadata, bytes: bytes.length, missing: await env.CACHE.get('nope') });
    } };
  )",
                     "env.js")
              .ok());
  WorkerRequest request;
  request.url = "https://example.com/";
  auto first = runtime->Dispatch(request);
  REQUIRE(first.ok());
  CHECK(first->body ==
        R"({"host":"api.example.com","burst":10,"debug":false,"user":"Ada","listed":["user:1","user:2"],)"
        R"("complete":true,"visits":"1","meta":{"by":"test"},"bytes":3,"missing":null})");
  auto second = runtime->Dispatch(request);
  REQUIRE(second.ok());
  CHECK_THAT(second->body, Catch::Contains(R"("visits":"2")"));
}

TEST_CASE("web api: streams from web-streams-polyfill: a TransformStream and a pull() source give the right bytes") {
  auto runtime = WorkerRuntime::Create();
  REQUIRE(runtime.ok());
  REQUIRE(runtime
              ->Load(R"(
    const upper = () => new TransformStream({ transform(text, controller) { controller.enqueue(text.toUpperCase()); } });
    export default { async fetch(request) {
      const path = new URL(request.url).pathname;
      if (path === '/upper') {
        // The request's body as a stream, through text decoding, a transform and encoding.
        return new Response(request.body.pipeThrough(new TextDecoderStream()).pipeThrough(upper())
                                        .pipeThrough(new TextEncoderStream()));
      }
      if (path === '/pull') {
        let i = 0;
        const counted = new ReadableStream({
          pull(controller) {
            if (i === 3) controller.close();
            else controller.enqueue(new TextEncoder().encode('chunk ' + i++ + ';'));
          },
        }, { highWaterMark: 0 });
        return new Response(counted, { headers: { 'content-type': 'text/plain' } });
      }
      if (path === '/bad-chunk') return new Response(new ReadableStream({ start(c) { c.enqueue('not bytes'); c.close(); } }));
      if (path === '/errors') {
        return new Response(new ReadableStream({ pull(c) { throw new RangeError('the upstream broke'); } }));
      }
      return new Response('plain');
    } };
  )",
                     "streams.js")
              .ok());
  WorkerRequest post;
  post.method = "POST";
  post.url = "https://example.com/upper";
  post.body = "h\xc3\xa9llo, streams";
  auto upper = runtime->Dispatch(post);
  INFO(upper.status().message());
  REQUIRE(upper.ok());
  CHECK(upper->body == "H\xc3\x89LLO, STREAMS");

  WorkerRequest get;
  get.url = "https://example.com/pull";
  auto pulled = runtime->Dispatch(get);
  REQUIRE(pulled.ok());
  CHECK(pulled->body == "chunk 0;chunk 1;chunk 2;");
  CHECK(pulled->headers == std::vector<std::pair<std::string, std::string>>{{"content-type", "text/plain"}});

  // An error inside a stream fails that request with the stream's error; the runtime serves on.
  get.url = "https://example.com/errors";
  auto broken = runtime->Dispatch(get);
  REQUIRE(!broken.ok());
  CHECK(broken.status().code() == ErrorCode::kScriptError);
  CHECK_THAT(broken.status().message(), Catch::Contains("RangeError: the upstream broke"));
  get.url = "https://example.com/bad-chunk";
  auto bad = runtime->Dispatch(get);
  REQUIRE(!bad.ok());
  CHECK_THAT(bad.status().message(), Catch::Contains("a body stream must produce Uint8Array chunks, not string"));
  get.url = "https://example.com/";
  auto after = runtime->Dispatch(get);
  REQUIRE(after.ok());
  CHECK(after->body == "plain");
}

TEST_CASE("web api: bodies are lazily created streams with bodyUsed, tee for clone, and streaming text decoding") {
  std::string out = Evaluate(R"(
    const r = new Response('abc');
    const stream = r.body;
    const same = r.body === stream;
    const usedBefore = r.bodyUsed;
    const reader = stream.getReader();
    const first = await reader.read();
    const usedAfterRead = r.bodyUsed;
    let again = '';
    try { await r.text(); } catch (e) { again = e.name; }

    const t = new Response('xyz');
    const textOnce = await t.text();
    const afterText = [t.bodyUsed, t.body.locked];

    const teed = new Response(new ReadableStream({ start(c) { c.enqueue(new Uint8Array([104, 105])); c.close(); } }));
    const twin = teed.clone();
    const both = [await teed.text(), await twin.text()];

    let locked = '';
    const held = new ReadableStream({});
    held.getReader();
    try { new Response(held); } catch (e) { locked = e.name; }

    const decoder = new TextDecoder();
    const euro = [0xe2, 0x82, 0xac];
    const pieces = [decoder.decode(new Uint8Array(euro.slice(0, 1)), { stream: true }),
                    decoder.decode(new Uint8Array(euro.slice(1)), { stream: true }), decoder.decode()];
    const blobText = await new Response(new Blob(['from a blob']).stream()).text();
    const empty = [new Response(null).body, request.body, (await new Response('').arrayBuffer()).byteLength];
    const globals = [typeof WritableStream, typeof ByteLengthQueuingStrategy, typeof ReadableStreamDefaultReader];
    return Response.json({ same, usedBefore, first: [...first.value], usedAfterRead, again, textOnce, afterText, both,
                           locked, pieces, blobText, empty, globals, byob: typeof new Response('q').body.getReader({ mode: 'byob' }).read });
  )");
  CHECK(out == R"({"same":true,"usedBefore":false,"first":[97,98,99],"usedAfterRead":true,"again":"TypeError",)"
               R"("textOnce":"xyz","afterText":[true,true],"both":["hi","hi"],"locked":"TypeError",)"
               R"("pieces":["",")"
               "\xe2\x82\xac"
               R"(",""],"blobText":"from a blob","empty":[null,null,0],)"
               R"("globals":["function","function","function"],"byob":"function"})");
}

TEST_CASE("web api: URLPattern from urlpattern-polyfill matches routes with named and regex groups") {
  std::string out = Evaluate(R"(
    const user = new URLPattern({ pathname: '/users/:id' });
    const order = new URLPattern({ pathname: '/orders/:id(\\d+)' });
    const site = new URLPattern('https://*.example.com/static/*');
    const m = user.exec('https://example.com/users/42?x=1');
    return Response.json({
      id: m.pathname.groups.id, search: m.search.input, test: user.test({ pathname: '/users/' }),
      digits: [order.test('https://a.test/orders/17'), order.test('https://a.test/orders/x')],
      site: site.exec('https://cdn.example.com/static/app.js').hostname.groups[0],
      other: site.test('https://example.org/static/app.js'), pathname: order.pathname,
    });
  )");
  CHECK(out == R"({"id":"42","search":"x=1","test":false,"digits":[true,false],"site":"cdn","other":false,)"
               R"json("pathname":"/orders/:id(\\d+)"})json");
}

TEST_CASE("web api: multipart/form-data bodies parse (text and file parts) and a FormData body round-trips") {
  std::string out = Evaluate(R"(
    const raw = '--XyZ\r\nContent-Disposition: form-data; name="title"\r\n\r\nGr\u00c3\u00bc\u00c3\u009fe\r\n' +
      '--XyZ\r\nContent-Disposition: form-data; name="doc"; filename="a.bin"\r\nContent-Type: application/octet-stream\r\n\r\n\x00\xff\r\x0a\r\n' +
      '--XyZ\r\ncontent-disposition: form-data; name="q%22"\r\n\r\n\r\n--XyZ--\r\n';
    const bytes = Uint8Array.from(raw, c => c.charCodeAt(0));
    const parsed = await new Request('https://x.example/', { method: 'POST', body: bytes,
      headers: { 'content-type': 'multipart/form-data; boundary="XyZ"' } }).formData();
    const doc = parsed.get('doc');
    const form = new FormData();
    form.append('name', 'Zoë\nSmith');
    form.append('upload', new Blob([new Uint8Array([1, 2, 3])], { type: 'image/png' }), 'p.png');
    const response = new Response(form);
    const type = response.headers.get('content-type');
    const back = await response.formData();
    let missing = '';
    try { await new Response('x', { headers: { 'content-type': 'multipart/form-data' } }).formData(); } catch (e) { missing = e.message; }
    let broken = '';
    try { await new Response('--b\r\nno end', { headers: { 'content-type': 'multipart/form-data; boundary=b' } }).formData(); } catch (e) { broken = e.message; }
    return Response.json({
      title: parsed.get('title'), doc: [doc.name, doc.type, hex(await doc.arrayBuffer())], quoted: parsed.get('q"'),
      type: /^multipart\/form-data; boundary=-+heapprof-formdata-[0-9a-f]{24}$/.test(type),
      name: back.get('name'), upload: [back.get('upload').name, back.get('upload').type, hex(await back.get('upload').arrayBuffer())],
      missing, broken });
  )");
  CHECK(out == R"({"title":"Grüße","doc":["a.bin","application/octet-stream","00ff0d0a"],"quoted":"","type":true,)"
               R"("name":"Zoë\r\nSmith","upload":["p.png","image/png","010203"],)"
               R"("missing":"a multipart/form-data body needs a boundary in its content-type",)"
               R"("broken":"the multipart/form-data body is malformed: a part does not end with a delimiter"})");
}

TEST_CASE("web api: Headers set, delete, has and iteration keep Fetch's semantics") {
  std::string out = Evaluate(R"(
    const h = new Headers({ 'X-B': ' 1 ', 'x-a': '\t2' });
    h.append('x-b', '3');
    h.append('Set-Cookie', 'a=1');
    h.append('x-b', '4');
    const before = h.get('X-B');
    h.set('x-b', '5');
    const afterSet = [...h];
    h.delete('X-A');
    const seen = [];
    for (const [name] of h) { seen.push(name); h.append('x-late', '1'); }
    let emptyBad = '';
    try { new Headers().get('bad name'); } catch (e) { emptyBad = e.name; }
    const proto = Object.create({ inherited: 'no' });
    proto.own = 'yes';
    const copy = new Headers(h);
    copy.set('x-b', 'copy');
    return Response.json({ before, afterSet, has: [h.has('x-a'), h.has('X-B')], seen, emptyBad,
                           fromProto: [...new Headers(proto)], original: h.get('x-b'), copy: copy.get('x-b'),
                           cookies: h.getSetCookie(), late: h.get('x-late') });
  )");
  CHECK(out ==
        R"({"before":"1, 3, 4","afterSet":[["set-cookie","a=1"],["x-a","2"],["x-b","5"]],)"
        R"("has":[false,true],"seen":["set-cookie","x-b","x-late"],"emptyBad":"TypeError","fromProto":[["own","yes"]],)"
        R"("original":"5","copy":"copy","cookies":["a=1"],"late":"1, 1, 1"})");
}

TEST_CASE("web api: the received request's headers and Response.redirect's are immutable, copies are not") {
  std::string out = Evaluate(R"(
    const attempt = f => { try { f(); return 'ok'; } catch (e) { return e.name + ': ' + e.message; } };
    const copy = new Request(request);
    return Response.json({
      set: attempt(() => request.headers.set('x-a', '1')),
      append: attempt(() => request.headers.append('x-a', '1')),
      del: attempt(() => request.headers.delete('x-token')),
      kept: request.headers.get('x-token'),
      copy: attempt(() => copy.headers.set('x-a', '1')),
      redirect: attempt(() => Response.redirect('https://example.com/next', 307).headers.set('x-a', '1')),
      response: attempt(() => new Response('x').headers.set('x-a', '1')),
    });
  )");
  CHECK(out ==
        R"({"set":"TypeError: Can't modify immutable headers.","append":"TypeError: Can't modify immutable headers.",)"
        R"("del":"TypeError: Can't modify immutable headers.","kept":"abc","copy":"ok",)"
        R"("redirect":"TypeError: Can't modify immutable headers.","response":"ok"})");
}

TEST_CASE(
    "web api: what workerd also offers: navigator, scheduler.wait, CustomEvent, Response.error, header value checks") {
  std::string out = Evaluate(R"(
    const attempt = f => { try { return f(); } catch (e) { return e.name + ': ' + e.message; } };
    const before = performance.now();
    await scheduler.wait(25);
    const event = new CustomEvent('ping', { detail: { n: 1 } });
    const error = Response.error();
    return Response.json({
      ua: navigator.userAgent, waited: performance.now() - before >= 25, detail: event.detail, plain: new CustomEvent('x').detail,
      error: [error.status, error.type, attempt(() => error.headers.set('a', 'b'))],
      newline: attempt(() => new Headers({ a: 'x\ny' })), trimmed: new Headers({ a: ' x \r\n' }).get('a'),
      nul: attempt(() => new Headers().append('a', 'x\0')),
      incoming: [request.redirect, request.integrity, request.keepalive],
      abort: attempt(() => { const c = new AbortController(); c.abort(); return c.signal.reason.message; }),
    });
  )");
  CHECK(out == R"({"ua":"Cloudflare-Workers","waited":true,"detail":{"n":1},"plain":null,)"
               R"("error":[0,"error","TypeError: Can't modify immutable headers."],)"
               R"("newline":"TypeError: Invalid header value.","trimmed":"x","nul":"TypeError: Invalid header value.",)"
               R"("incoming":["manual","",false],"abort":"The operation was aborted"})");
}

TEST_CASE("web api: CompressionStream and DecompressionStream through zlib round-trip and refuse bad data") {
  std::string out = Evaluate(R"(
    const text = 'hello compression '.repeat(200) + 'é';
    const through = (bytes, stream) => new Response(new Response(bytes).body.pipeThrough(stream)).bytes();
    const results = {};
    for (const format of ['gzip', 'deflate', 'deflate-raw']) {
      const packed = await through(text, new CompressionStream(format));
      const unpacked = new TextDecoder().decode(await through(packed, new DecompressionStream(format)));
      // The format's header (a raw deflate stream has none: it starts with its first block).
      const header = format === 'deflate-raw' ? hex(packed.slice(0, 2)) !== '789c' && hex(packed.slice(0, 2)) !== '1f8b' : hex(packed.slice(0, 2));
      results[format] = [header, packed.length < text.length / 4, unpacked === text];
    }
    const errorOf = async (bytes, format) => {
      try { await through(bytes, new DecompressionStream(format)); return 'none'; } catch (e) { return e.name + ': ' + e.message; }
    };
    const gz = await through(text, new CompressionStream('gzip'));
    const extra = new Uint8Array(gz.length + 1); extra.set(gz);
    let unsupported = '';
    try { new CompressionStream('br'); } catch (e) { unsupported = e.name + ': ' + e.message; }
    return Response.json({ results, corrupt: await errorOf(new Uint8Array([1, 2, 3, 4]), 'gzip'),
                           truncated: await errorOf(gz.slice(0, 20), 'gzip'), trailing: await errorOf(extra, 'gzip'),
                           empty: await errorOf(new Uint8Array(0), 'deflate'), unsupported });
  )");
  // workerd's words, which workers echo in their responses.
  CHECK(out ==
        R"({"results":{"gzip":["1f8b",true,true],"deflate":["789c",true,true],"deflate-raw":[)"
        R"json(true,true,true]},"corrupt":"TypeError: Decompression failed.",)json"
        R"("truncated":"TypeError: Called close() on a decompression stream with incomplete data",)"
        R"("trailing":"TypeError: Trailing bytes after end of compressed data",)"
        R"("empty":"TypeError: Called close() on a decompression stream with incomplete data",)"
        R"("unsupported":"TypeError: The compression format must be either 'deflate', 'deflate-raw' or 'gzip'."})");
}

TEST_CASE("web api: compression streams round-trip chunk by chunk, whatever the chunk sizes") {
  // Every format, through a writer in chunks of 1 byte up to more than the
  // whole input, both ways; the bytes come back exactly and the output is
  // read while it is written (pieces of at most 64 KiB).
  std::string out = Evaluate(R"(
    // 300 KiB that compresses (words) but not to nothing (a running counter).
    const parts = [];
    for (let i = 0; parts.join('').length < 300 * 1024; i++) parts.push(`{"id":${i},"name":"item ${i * 7919 % 1000}"},`);
    const input = new TextEncoder().encode(parts.join('').slice(0, 300 * 1024));
    const pipe = async (stream, bytes, size) => {
      const writer = stream.writable.getWriter();
      const writing = (async () => {
        for (let at = 0; at < bytes.length; at += size) await writer.write(bytes.slice(at, at + size));
        await writer.close();
      })();
      const pieces = [];
      for await (const piece of stream.readable) pieces.push(piece);
      await writing;
      const all = new Uint8Array(pieces.reduce((n, p) => n + p.length, 0));
      let at = 0;
      for (const p of pieces) { all.set(p, at); at += p.length; }
      return { all, pieces: pieces.length, largest: Math.max(...pieces.map(p => p.length)) };
    };
    const same = (a, b) => a.length === b.length && a.every((x, i) => x === b[i]);
    const results = {};
    for (const format of ['gzip', 'deflate', 'deflate-raw']) {
      const packed = (await pipe(new CompressionStream(format), input, 64 * 1024)).all;
      const row = [];
      for (const size of [1, 7, 100, 4096, 65536, 1 << 20]) {
        // Small chunks on the compressed side only: 300 KiB one byte at a time would be slow, not more telling.
        const compressed = await pipe(new CompressionStream(format), input, Math.max(size, 512));
        const restored = await pipe(new DecompressionStream(format), packed, size);
        const again = await pipe(new DecompressionStream(format), compressed.all, size);
        row.push(same(restored.all, input) && same(again.all, input) && restored.largest <= 65536 && restored.pieces >= 5);
      }
      results[format] = row;
    }
    // Output before the input ends: half the compressed bytes give a first piece.
    const early = new DecompressionStream('gzip');
    const packed = (await pipe(new CompressionStream('gzip'), input, 65536)).all;
    const writer = early.writable.getWriter();
    writer.write(packed.slice(0, packed.length >> 1));
    const first = await early.readable.getReader().read();
    return Response.json({ results, early: [first.done, first.value.length > 0] });
  )");
  CHECK(out == R"({"results":{"gzip":[true,true,true,true,true,true],"deflate":[true,true,true,true,true,true],)"
               R"("deflate-raw":[true,true,true,true,true,true]},"early":[false,true]})");
}

TEST_CASE("web api: a corrupt, truncated or overlong compressed stream errors both sides with a TypeError") {
  std::string out = Evaluate(R"(
    const packed = new Uint8Array(await new Response(new Response('x'.repeat(100000)).body.pipeThrough(new CompressionStream('gzip'))).arrayBuffer());
    // Writes chunk by chunk while reading; what the write, the close and the read each see.
    const feed = async (chunks) => {
      const stream = new DecompressionStream('gzip');
      const writer = stream.writable.getWriter();
      let total = 0;
      const reading = (async () => {
        try { for await (const piece of stream.readable) total += piece.length; return 'done ' + total; }
        catch (e) { return `${e.constructor.name}: ${e.message}`; }
      })();
      const seen = [];
      for (const chunk of chunks) seen.push(await writer.write(chunk).then(() => 'ok', e => `${e.constructor.name}: ${e.message}`));
      seen.push(await writer.close().then(() => 'closed', e => `${e.constructor.name}: ${e.message}`));
      return [...seen.filter((s, i) => s !== 'ok' || i === 0), await reading];
    };
    const corrupt = packed.slice(); corrupt[20] ^= 0xff; corrupt[21] ^= 0xff;
    const withTrailing = new Uint8Array(packed.length + 3); withTrailing.set(packed);
    return Response.json({
      whole: await feed([packed.slice(0, 50), packed.slice(50)]),
      corrupt: await feed([corrupt.slice(0, 10), corrupt.slice(10)]),
      truncated: await feed([packed.slice(0, packed.length - 1)]),
      trailing: await feed([packed, new Uint8Array([0x1f])]),
      trailingInChunk: await feed([withTrailing]),
      notBytes: await feed(['text']),
    });
  )");
  // A write after the error (here: the close) is refused by the streams library itself.
  const std::string closed =
      "TypeError: The stream (in errored state) is not in the writable state and cannot be closed";
  CHECK(out ==
        R"({"whole":["ok","closed","done 100000"],)"
        R"("corrupt":["ok","TypeError: Decompression failed.",")" +
            closed +
            R"(","TypeError: Decompression failed."],)"
            R"("truncated":["ok","TypeError: Called close() on a decompression stream with incomplete data",)"
            R"("TypeError: Called close() on a decompression stream with incomplete data"],)"
            R"("trailing":["ok","TypeError: Trailing bytes after end of compressed data",")" +
            closed +
            R"(","TypeError: Trailing bytes after end of compressed data"],)"
            R"("trailingInChunk":["TypeError: Trailing bytes after end of compressed data",")" +
            closed +
            R"(","TypeError: Trailing bytes after end of compressed data"],)"
            R"("notBytes":["TypeError: a DecompressionStream chunk must be an ArrayBuffer or an ArrayBufferView",")" +
            closed + R"(","TypeError: a DecompressionStream chunk must be an ArrayBuffer or an ArrayBufferView"]})");
}
