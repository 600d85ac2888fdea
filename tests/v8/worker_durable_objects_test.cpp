// Durable Objects in the embedded runtime, on a real isolate: env.NS from
// WorkerOptions::durable_objects, workerd's ids (checked against the value
// workerd gives for the same unique key and name), RPC with copied arguments
// and rethrown errors, stub.fetch(), the input gate over storage, both class
// forms, storage kept across requests, and the errors of a binding whose
// class the worker does not export. tests/conformance/apps/durable-objects*
// compare whole apps with workerd itself.
#include <catch2/catch.hpp>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "heapprof/runtime/worker_runtime.h"
#include "run_fetch_body.h"

using namespace heapprof;

namespace {

Result<WorkerRuntime> Loaded(const std::string& source, Status* status) {
  WorkerOptions options;
  options.console = [](std::string_view, std::string_view) {};
  options.durable_objects = {{"COUNTERS", "Counter", "durable-objects-Counter", false},
                             {"ROOMS", "Room", "durable-objects-Room", true}};
  Result<WorkerRuntime> runtime = WorkerRuntime::Create(options);
  if (runtime.ok()) *status = runtime->Load(source, "/virtual/objects.js");
  return runtime;
}

std::string Fetch(WorkerRuntime& runtime, const std::string& path) {
  return heapprof::testing::FetchBody(runtime, path);
}

const char* kWorker = R"(
import { DurableObject } from 'cloudflare:workers';
export class Counter extends DurableObject {
  constructor(ctx, env) {
    super(ctx, env);
    this.boots = 0;
    ctx.blockConcurrencyWhile(async () => { await new Promise(r => setTimeout(r, 10)); this.boots++; });
  }
  async increment() {
    const n = ((await this.ctx.storage.get('n')) ?? 0) + 1;
    await this.ctx.storage.put('n', n);
    return n;
  }
  mutate(value) { value.list.push('inside'); return value; }
  boom() { const e = new RangeError('too far'); e.extra = 1; throw e; }
  whoami() { return [this.ctx.id.name, this.ctx.id.toString(), this.boots, this.env.GREETING ?? null]; }
  sql() { return this.ctx.storage.sql; }
  async fetch(request) { return new Response(request.method + ' ' + new URL(request.url).pathname + ' ' + await request.text(), { status: 203 }); }
}
export class Room {
  constructor(state, env) { this.state = state; }
  async fetch(request) { return new Response('room ' + this.state.id.name); }
}
const describe = e => e.name + ': ' + e.message;
export default {
  async fetch(request, env) {
    const path = new URL(request.url).pathname;
    const stub = env.COUNTERS.getByName('alpha');
    switch (path) {
      case '/id': return new Response(env.COUNTERS.idFromName('alpha').toString());
      case '/gate': return new Response(JSON.stringify(await Promise.all([1, 2, 3, 4, 5].map(() => stub.increment()))));
      case '/count': return new Response(String(await stub.increment()));
      case '/other': return new Response(String(await env.COUNTERS.getByName('beta').increment()));
      case '/copy': {
        const value = { list: ['outside'] };
        const back = await stub.mutate(value);
        return new Response(JSON.stringify([value.list, back.list, back === value]));
      }
      case '/error': try { await stub.boom(); return new Response('no'); } catch (e) {
        return new Response(JSON.stringify([describe(e), e instanceof RangeError, e.extra ?? null]));
      }
      case '/missing': try { await stub.nothing(); return new Response('no'); } catch (e) { return new Response(describe(e)); }
      case '/whoami': return new Response(JSON.stringify(await stub.whoami()));
      case '/fetch': {
        const r = await stub.fetch('https://inner/path', { method: 'POST', body: 'hello' });
        return new Response(r.status + ' ' + await r.text());
      }
      case '/classic': return new Response(await (await env.ROOMS.getByName('lobby').fetch('https://room/')).text());
      case '/classic-rpc': try { await env.ROOMS.getByName('lobby').anything(); return new Response('no'); } catch (e) { return new Response(describe(e)); }
      case '/bad-id': try { env.COUNTERS.idFromString(env.ROOMS.idFromName('x').toString()); return new Response('no'); } catch (e) { return new Response(describe(e)); }
      case '/sql': try { await stub.sql(); return new Response('no'); } catch (e) { return new Response(describe(e)); }
      case '/wrong-ns': try { env.ROOMS.get(env.COUNTERS.idFromName('x')); return new Response('no'); } catch (e) { return new Response(describe(e)); }
    }
    return new Response('?', { status: 404 });
  },
};
)";

}  // namespace

TEST_CASE("durable objects: ids, RPC, fetch, the input gate and storage across requests, as workerd has them",
          "[durable-objects]") {
  Status status = Status::Ok();
  Result<WorkerRuntime> runtime = Loaded(kWorker, &status);
  REQUIRE(runtime.ok());
  INFO(status.message());
  REQUIRE(status.ok());
  // workerd 2026-11-17 answers this for uniqueKey "durable-objects-Counter" and idFromName("alpha").
  CHECK(Fetch(*runtime, "/id") == "7f808b7233e262ca7340f0d4a0674acbe14080e71e39b43ebce671499a7625d7");
  // Five concurrent read-then-write calls: the gate keeps every increment, in call order.
  CHECK(Fetch(*runtime, "/gate") == "[1,2,3,4,5]");
  CHECK(Fetch(*runtime, "/count") == "6");  // storage and the instance live on across requests
  CHECK(Fetch(*runtime, "/other") == "1");  // another name, another object
  CHECK(Fetch(*runtime, "/copy") == R"([["outside"],["outside","inside"],false])");
  CHECK(Fetch(*runtime, "/error") == R"(["RangeError: too far",true,null])");
  CHECK(Fetch(*runtime, "/missing") == "TypeError: The RPC receiver does not implement the method \"nothing\".");
  // The constructor's blockConcurrencyWhile ran once, before the first event.
  CHECK(Fetch(*runtime, "/whoami") ==
        R"(["alpha","7f808b7233e262ca7340f0d4a0674acbe14080e71e39b43ebce671499a7625d7",1,null])");
  CHECK(Fetch(*runtime, "/fetch") == "203 POST /path hello");
  CHECK(Fetch(*runtime, "/classic") == "room lobby");
  CHECK(
      Fetch(*runtime, "/classic-rpc")
          .starts_with(
              "TypeError: The receiving Durable Object does not support RPC, because its class was not declared with"));
  CHECK(Fetch(*runtime, "/bad-id") == "TypeError: Durable Object ID is not valid for this namespace.");
  CHECK(Fetch(*runtime, "/sql").find("ctx.storage.sql") != std::string::npos);
  CHECK(Fetch(*runtime, "/wrong-ns").starts_with("TypeError:"));

  Result<std::vector<DurableObjectReport>> objects = runtime->DurableObjects();
  REQUIRE(objects.ok());
  REQUIRE(objects->size() == 3);
  CHECK((*objects)[0].binding == "COUNTERS");
  CHECK((*objects)[0].name == "alpha");
  CHECK((*objects)[0].requests == 12);  // gate 5, count, copy, error, missing, whoami, fetch, sql
  CHECK((*objects)[1].name == "beta");
  CHECK((*objects)[1].requests == 1);
  CHECK((*objects)[2].binding == "ROOMS");
}

TEST_CASE("durable objects: a binding whose class the worker does not export fails the load, naming both",
          "[durable-objects]") {
  Status status = Status::Ok();
  Result<WorkerRuntime> runtime =
      Loaded("export class Counter {}\nexport default { fetch() { return new Response('x'); } };", &status);
  REQUIRE(runtime.ok());
  REQUIRE_FALSE(status.ok());
  CHECK(status.message().find("env.ROOMS") != std::string::npos);
  CHECK(status.message().find("no class Room") != std::string::npos);

  Status script_status = Status::Ok();
  Result<WorkerRuntime> script =
      Loaded("addEventListener('fetch', e => e.respondWith(new Response('x')));", &script_status);
  REQUIRE(script.ok());
  REQUIRE_FALSE(script_status.ok());
  CHECK(script_status.message().find("exported by an ES module") != std::string::npos);
}

TEST_CASE("durable objects: each object in an isolate of its own and a call into itself refused", "[durable-objects]") {
  WorkerOptions options;
  options.console = [](std::string_view, std::string_view) {};
  options.durable_objects = {{"OBJS", "Obj", "isolates-Obj", false}};
  std::vector<std::string> created;
  options.on_durable_object_created = [&](const DurableObjectReport& o, WorkerRuntime&) {
    created.push_back(o.binding + ":" + o.name);
  };
  Result<WorkerRuntime> runtime = WorkerRuntime::Create(options);
  REQUIRE(runtime.ok());
  Status status = runtime->Load(R"(
import { DurableObject } from 'cloudflare:workers';
globalThis.loads = (globalThis.loads ?? 0) + 1;  // the module's top level, once per isolate
export class Obj extends DurableObject {
  bump() { globalThis.marker = (globalThis.marker ?? 0) + 1; return [globalThis.marker, globalThis.loads]; }
  async self() { return await this.env.OBJS.getByName(this.ctx.id.name).bump(); }
  async other(name) { return await this.env.OBJS.getByName(name).bump(); }
}
export default {
  async fetch(request, env) {
    const path = new URL(request.url).pathname;
    const a = env.OBJS.getByName('a');
    if (path === '/bump') return new Response(JSON.stringify(await a.bump()));
    if (path === '/worker') return new Response(JSON.stringify([globalThis.marker ?? null, globalThis.loads]));
    if (path === '/chain') return new Response(JSON.stringify(await a.other('b')));
    if (path === '/self') try { await a.self(); return new Response('no'); } catch (e) { return new Response(e.message); }
    return new Response('?', { status: 404 });
  },
};
)",
                                "/virtual/isolates.js");
  INFO(status.message());
  REQUIRE(status.ok());
  CHECK(Fetch(*runtime, "/bump") == "[1,1]");
  CHECK(Fetch(*runtime, "/bump") == "[2,1]");
  CHECK(Fetch(*runtime, "/worker") == "[null,1]");  // the object's globals are not the worker's
  CHECK(Fetch(*runtime, "/chain") == "[1,1]");      // b has globals of its own too
  CHECK(Fetch(*runtime, "/self").find("was called while it runs an event") != std::string::npos);
  CHECK(created == std::vector<std::string>{"OBJS:a", "OBJS:b"});

  WorkerRuntime* a = runtime->DurableObjectRuntime("OBJS", "a");
  REQUIRE(a != nullptr);
  CHECK(a->isolate().get() != runtime->isolate().get());
  Result<std::vector<DurableObjectReport>> objects = runtime->DurableObjects();
  REQUIRE(objects.ok());
  REQUIRE(objects->size() == 2);
  CHECK((*objects)[0].requests == 4);  // bump, bump, other, self (the call into itself is refused, not counted)
  CHECK((*objects)[0].heap_used_bytes > 0);
  CHECK(runtime->DurableObjectRuntime("OBJS", (*objects)[1].id) == runtime->DurableObjectRuntime("OBJS", "b"));
  CHECK(runtime->DurableObjectRuntime("OBJS", "c") == nullptr);
}

TEST_CASE("durable objects: an object idle past the limit is evicted and made anew with its storage",
          "[durable-objects]") {
  WorkerOptions options;
  options.console = [](std::string_view, std::string_view) {};
  options.durable_objects = {{"OBJS", "Obj", "evict-Obj", false}};
  options.durable_object_idle_limit = std::chrono::milliseconds(1);
  int evicted = 0;
  options.on_durable_object_evicted = [&](const DurableObjectReport& o, WorkerRuntime&) {
    CHECK(o.name == "a");
    ++evicted;
  };
  Result<WorkerRuntime> runtime = WorkerRuntime::Create(options);
  REQUIRE(runtime.ok());
  Status status = runtime->Load(R"(
import { DurableObject } from 'cloudflare:workers';
let calls = 0;
export class Obj extends DurableObject {
  async bump() {
    const n = ((await this.ctx.storage.get('n')) ?? 0) + 1;
    await this.ctx.storage.put('n', n);
    return [n, ++calls];
  }
}
export default { async fetch(request, env) { return new Response(JSON.stringify(await env.OBJS.getByName('a').bump())); } };
)",
                                "/virtual/evict.js");
  INFO(status.message());
  REQUIRE(status.ok());
  CHECK(Fetch(*runtime, "/") == "[1,1]");
  // Idle at least 20 ms against a limit of 1 ms: evicted before the next call.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  CHECK(Fetch(*runtime, "/") == "[2,1]");  // storage kept, the module's globals new
  CHECK(evicted == 1);
  Result<std::vector<DurableObjectReport>> objects = runtime->DurableObjects();
  REQUIRE(objects.ok());
  REQUIRE(objects->size() == 1);
  CHECK((*objects)[0].requests == 2);
  CHECK((*objects)[0].restarts == 1);
}
