// nodejs_compat and cloudflare:workers in the embedded runtime, on a real
// isolate: the node: modules (bare names too), AsyncLocalStorage on V8's
// continuation-preserved embedder data across awaits, timers and nested
// runs, Buffer, EventEmitter, node:crypto against published vectors, the
// flags' gates, and WorkerEntrypoint / env / waitUntil.
#include <catch2/catch.hpp>

#include <string>
#include <vector>

#include "heapprof/runtime/worker_runtime.h"

using namespace heapprof;

namespace {

struct Loaded {
  Result<WorkerRuntime> runtime;
  Status status;
};

Loaded LoadWorker(const std::string& source, std::vector<std::string> flags, WorkerBindings bindings = {}) {
  WorkerOptions options;
  options.console = [](std::string_view, std::string_view) {};
  options.compatibility_flags = std::move(flags);
  options.bindings = std::move(bindings);
  Loaded out{WorkerRuntime::Create(options), Status::Ok()};
  if (out.runtime.ok()) out.status = out.runtime->Load(source, "/virtual/node_worker.js");
  return out;
}

std::string Fetch(WorkerRuntime& runtime, const std::string& path = "/") {
  WorkerRequest request;
  request.url = "https://example.com" + path;
  auto response = runtime.Dispatch(request);
  INFO(response.status().message());
  REQUIRE(response.ok());
  return response->body;
}

// The body of an async fetch handler (its statements), with nodejs_compat.
std::string Run(const std::string& imports, const std::string& body,
                std::vector<std::string> flags = {"nodejs_compat"}) {
  Loaded loaded = LoadWorker(imports + "\nexport default { async fetch(request, env, ctx) {\n" + body + "\n} };\n",
                             std::move(flags));
  REQUIRE(loaded.runtime.ok());
  INFO(loaded.status.message());
  REQUIRE(loaded.status.ok());
  return Fetch(*loaded.runtime);
}

}  // namespace

TEST_CASE("nodejs_compat: AsyncLocalStorage keeps its store across awaits, then(), timers and nested runs") {
  std::string out = Run("import { AsyncLocalStorage, AsyncResource } from 'node:async_hooks';", R"(
    const als = new AsyncLocalStorage();
    const other = new AsyncLocalStorage();
    const seen = [];
    const tick = () => new Promise(resolve => setTimeout(resolve, 5));
    await als.run('outer', async () => {
      seen.push('sync:' + als.getStore());
      await null;
      seen.push('await:' + als.getStore());
      await tick();
      seen.push('timer-await:' + als.getStore());
      await new Promise(resolve => setTimeout(() => { seen.push('timer-cb:' + als.getStore()); resolve(); }, 1));
      await Promise.resolve().then(() => seen.push('then:' + als.getStore()));
      await new Promise(resolve => queueMicrotask(() => { seen.push('microtask:' + als.getStore()); resolve(); }));
      await als.run('inner', async () => {
        await tick();
        seen.push('nested:' + als.getStore() + '/' + other.getStore());
        await other.run(7, async () => { await null; seen.push('both:' + als.getStore() + '/' + other.getStore()); });
      });
      seen.push('after-nested:' + als.getStore());
      seen.push('exit:' + als.exit(() => als.getStore()));
      const resource = new AsyncResource('probe');
      const snapshot = AsyncLocalStorage.snapshot();
      const bound = AsyncLocalStorage.bind(() => als.getStore());
      await als.run('elsewhere', async () => {
        seen.push('resource:' + resource.runInAsyncScope(() => als.getStore()));
        seen.push('snapshot:' + snapshot(() => als.getStore()));
        seen.push('bound:' + bound());
        seen.push('here:' + als.getStore());
      });
    });
    // Two runs in flight at once keep their own stores.
    const interleaved = await Promise.all([1, 2].map(n => als.run('run' + n, async () => {
      await tick();
      await null;
      return als.getStore();
    })));
    seen.push('interleaved:' + interleaved.join(','));
    seen.push('outside:' + als.getStore());
    let enter = '';
    try { als.enterWith(1); } catch (e) { enter = e.message; }
    seen.push(enter);
    return new Response(seen.join('\n'));
  )");
  CHECK(out ==
        "sync:outer\nawait:outer\ntimer-await:outer\ntimer-cb:outer\nthen:outer\nmicrotask:outer\n"
        "nested:inner/undefined\nboth:inner/7\nafter-nested:outer\nexit:undefined\nresource:outer\n"
        "snapshot:outer\nbound:outer\nhere:elsewhere\ninterleaved:run1,run2\noutside:undefined\n"
        "asyncLocalStorage.enterWith() is not implemented");
}

TEST_CASE("nodejs_compat: a request starts outside every run, and a store does not leak into the next request") {
  Loaded loaded = LoadWorker(R"(
    import { AsyncLocalStorage } from 'node:async_hooks';
    const als = new AsyncLocalStorage();
    let n = 0;
    export default { async fetch(request) {
      const before = String(als.getStore());
      const inside = await als.run(++n, async () => { await new Promise(r => setTimeout(r, 1)); return als.getStore(); });
      return new Response(before + ' ' + inside);
    } };
  )",
                             {"nodejs_compat"});
  REQUIRE(loaded.runtime.ok());
  INFO(loaded.status.message());
  REQUIRE(loaded.status.ok());
  CHECK(Fetch(*loaded.runtime) == "undefined 1");
  CHECK(Fetch(*loaded.runtime) == "undefined 2");
}

TEST_CASE("nodejs_compat: Buffer's encodings and the methods SDKs use") {
  std::string out = Run("import { Buffer as B, isUtf8 } from 'node:buffer';", R"(
    const b = Buffer.from('h\u00e9llo?>', 'utf8');
    const r = [
      B === Buffer, b.length, b.toString('hex'), b.toString('base64'), b.toString('base64url'),
      Buffer.from('aGk_Pz4-', 'base64url').toString(), Buffer.from('68656c6c6f', 'hex').toString('latin1'),
      Buffer.byteLength('h\u00e9'), Buffer.concat([Buffer.from('a'), Buffer.from('b')]).toString(),
      Buffer.alloc(3, 1).join(','), b.readUInt16BE(0), Buffer.isBuffer(b), Buffer.isEncoding('base64url'),
      b.subarray(1, 3).toString('hex'), JSON.stringify(Buffer.from([1, 2])), b.equals(Buffer.from(b)),
      isUtf8(new Uint8Array([0xff])), b instanceof Uint8Array,
    ];
    return new Response(r.join('|'));
  )");
  CHECK(out ==
        "true|8|68c3a96c6c6f3f3e|aMOpbGxvPz4=|aMOpbGxvPz4|hi?"
        "?>>|hello|3|ab|1,1,1|26819|true|true|c3a9|"
        "{\"type\":\"Buffer\",\"data\":[1,2]}|true|false|true");
}

TEST_CASE("nodejs_compat: EventEmitter, util, path, string_decoder, process and url") {
  std::string out = Run(R"(
    import EventEmitter, { once, errorMonitor } from 'events';
    import { format, inspect, promisify, types } from 'node:util';
    import path from 'node:path';
    import { StringDecoder } from 'string_decoder';
    import process from 'node:process';
    import { fileURLToPath } from 'node:url';
  )",
                        R"(
    const e = new EventEmitter();
    const got = [];
    e.on('x', (a, b) => got.push('on' + a + b));
    e.once('x', a => got.push('once' + a));
    e.on(errorMonitor, err => got.push('monitor:' + err.message));
    e.on('error', err => got.push('error:' + err.message));
    e.emit('x', 1, 2); e.emit('x', 3, 4); e.emit('error', new Error('boom'));
    setTimeout(() => e.emit('later', 'v'), 1);
    const [later] = await once(e, 'later');
    const sleep = promisify((ms, cb) => setTimeout(() => cb(null, ms * 2), ms));
    const d = new StringDecoder('utf8');
    const euro = Buffer.from('\u20ac');
    const r = [
      got.join(','), later, e.listenerCount('x'), format('%s=%d %j', 'a', 42, { b: 1 }), inspect({ a: [1, 'x'], m: new Map([[1, 2]]) }),
      await sleep(3), types.isPromise(Promise.resolve()), types.isUint8Array(euro),
      path.join('/a/b', '../c', 'd.txt'), path.extname('x.tar.gz'), path.resolve('/x', 'y'),
      d.write(euro.subarray(0, 1)) + '|' + d.write(euro.subarray(1)), JSON.stringify(process.env), process.platform,
      typeof globalThis.process, globalThis.global === globalThis, typeof setImmediate,
      fileURLToPath('file:///tmp/a%20b'),
    ];
    return new Response(r.join('\n'));
  )");
  CHECK(out ==
        "on12,once1,on34,monitor:boom,error:boom\nv\n1\na=42 {\"b\":1}\n{ a: [ 1, 'x' ], m: Map(1) { 1 => 2 } "
        "}\n6\ntrue\n"
        "true\n/a/c/d.txt\n.gz\n/x/y\n|\u20ac\n{}\nlinux\nobject\ntrue\nfunction\n/tmp/a b");
}

TEST_CASE("nodejs_compat: node:crypto hashes and HMACs match the published vectors") {
  std::string out =
      Run("import crypto, { createHash, createHmac, timingSafeEqual, randomBytes } from 'node:crypto';", R"(
    const r = [
      createHash('sha256').update('abc').digest('hex'),
      createHash('sha1').update('a').update('bc').digest('base64'),
      createHash('md5').update(Buffer.from('abc')).digest('hex'),
      createHash('sha512').update('abc').copy().digest('hex').slice(0, 16),
      createHmac('sha256', 'Jefe').update('what do ya want for nothing?').digest('hex'),
      timingSafeEqual(Buffer.from('ab'), Buffer.from('ab')), randomBytes(16).length,
      /^[0-9a-f-]{36}$/.test(crypto.randomUUID()), crypto.webcrypto === globalThis.crypto,
    ];
    let unknown = '';
    try { createHash('sha3-256'); } catch (e) { unknown = e.message; }
    r.push(unknown);
    return new Response(r.join('\n'));
  )");
  CHECK(out ==
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad\nqZk+NkcGgWq6PiVxeFDCbJzQ2J0=\n"
        "900150983cd24fb0d6963f7d28e17f72\nddaf35a193617aba\n"
        "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843\ntrue\n16\ntrue\ntrue\n"
        "Digest method not supported");
}

TEST_CASE("nodejs_compat: the flags gate the modules and globals, and what is not offered is refused by name") {
  // Without the flag: no module, no globals.
  Loaded plain = LoadWorker("import { Buffer } from 'node:buffer'; export default { fetch() {} };", {});
  REQUIRE(plain.runtime.ok());
  CHECK_THAT(plain.status.message(),
             Catch::Contains("cannot import \"node:buffer\"") && Catch::Contains("--runtime workerd"));
  CHECK(Run("", "return new Response(typeof Buffer + typeof process + typeof global);", {}) ==
        "undefinedundefinedundefined");
  // nodejs_als: node:async_hooks alone.
  CHECK(Run("import { AsyncLocalStorage } from 'node:async_hooks';",
            "return new Response(new AsyncLocalStorage().run(1, () => 'als') + typeof Buffer);",
            {"nodejs_als"}) == "alsundefined");
  Loaded als_only = LoadWorker("import 'node:events'; export default { fetch() {} };", {"nodejs_als"});
  CHECK_THAT(als_only.status.message(), Catch::Contains("cannot import \"node:events\""));
  // A module the runtime lacks, with the flag.
  Loaded missing = LoadWorker("import 'node:zlib'; export default { fetch() {} };", {"nodejs_compat"});
  CHECK_THAT(missing.status.message(),
             Catch::Contains("cannot import \"node:zlib\"") && Catch::Contains("--runtime workerd"));
  // A flag the runtime does not honour.
  WorkerOptions options;
  options.compatibility_flags = {"streams_enable_constructors"};
  auto refused = WorkerRuntime::Create(options);
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(refused.status().message(),
             Catch::Contains("streams_enable_constructors") && Catch::Contains("--runtime workerd"));
}

TEST_CASE("nodejs_compat: nodejs_compat_populate_process_env puts the text vars in process.env") {
  WorkerBindings bindings;
  bindings.vars = {{"GREETING", "\"hi\""}, {"COUNT", "3"}};
  Loaded loaded = LoadWorker("export default { fetch() { return new Response(JSON.stringify(process.env)); } };",
                             {"nodejs_compat", "nodejs_compat_populate_process_env"}, bindings);
  REQUIRE(loaded.runtime.ok());
  REQUIRE(loaded.status.ok());
  CHECK(Fetch(*loaded.runtime) == R"({"GREETING":"hi"})");
}

TEST_CASE("cloudflare:workers: a WorkerEntrypoint class, env and waitUntil") {
  WorkerBindings bindings;
  bindings.vars = {{"NAME", "\"bound\""}};
  Loaded loaded = LoadWorker(R"(
    import { WorkerEntrypoint, RpcTarget, DurableObject, env, waitUntil } from 'cloudflare:workers';
    let waited = 0;
    let instances = 0;
    export class Counter extends DurableObject {}
    export default class extends WorkerEntrypoint {
      constructor(ctx, env) { super(ctx, env); instances++; }
      async fetch(request) {
        waitUntil(new Promise(resolve => setTimeout(() => { waited++; resolve(); }, 10)));
        this.ctx.waitUntil(Promise.resolve());
        return new Response([this.env.NAME, env === this.env, instances, waited, typeof RpcTarget,
                             new URL(request.url).pathname].join(' '));
      }
    }
  )",
                             {}, bindings);
  REQUIRE(loaded.runtime.ok());
  INFO(loaded.status.message());
  REQUIRE(loaded.status.ok());
  CHECK(Fetch(*loaded.runtime, "/a") == "bound true 1 0 function /a");
  CHECK(Fetch(*loaded.runtime, "/b") == "bound true 2 1 function /b");
}
