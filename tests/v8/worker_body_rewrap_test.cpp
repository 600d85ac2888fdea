// A body made from another body's stream that nothing has read
// (`new Response(res.body, res)`, as itty-router's cors and Hono do) is taken
// whole instead of read through a reader: what a worker can see of it must be
// what reading the stream gives (bytes, used and locked states, BYOB reads,
// tee, a released lock) and the host must get the same bytes.
#include <catch2/catch.hpp>

#include <chrono>
#include <string>
#include <utility>

#include "heapprof/runtime/worker_runtime.h"

using namespace heapprof;

namespace {

WorkerRuntime Load(const std::string& source) {
  WorkerOptions options;
  // These cases check what the APIs answer, not how fast.
  options.request_timeout = std::chrono::minutes(5);
  auto runtime = WorkerRuntime::Create(options);
  REQUIRE(runtime.ok());
  Status loaded = runtime->Load(source, "rewrap.js");
  INFO(loaded.message());
  REQUIRE(loaded.ok());
  return std::move(*runtime);
}

std::string Fetch(WorkerRuntime& runtime, const std::string& url) {
  WorkerRequest request;
  request.url = url;
  auto response = runtime.Dispatch(request);
  INFO(response.status().message());
  REQUIRE(response.ok());
  return response->body;
}

}  // namespace

TEST_CASE("web api: a re-wrapped unread body reads as its stream would") {
  auto runtime = Load(R"(
    export default { async fetch(request) {
      const r = new Response('h\u00e9llo');
      const s = r.body;
      const wrapped = new Response(s, r);
      const before = [wrapped.body === s, r.bodyUsed, wrapped.bodyUsed, s.locked];
      const text = await wrapped.text();
      const after = [r.bodyUsed, wrapped.bodyUsed, s.locked];
      let again = '';
      try { await wrapped.text(); } catch (e) { again = e.name; }
      const byob = new Response(new Response(new Uint8Array([1, 2, 3, 4, 5])).body).body.getReader({ mode: 'byob' });
      const reads = [];
      for (const size of [2, 8, 8]) { const { value, done } = await byob.read(new Uint8Array(size)); reads.push([...value], done); }
      const [t1, t2] = new Response('abc').body.tee();
      const teed = [await new Response(t1).text(), await new Response(t2).text()];
      const released = new Response('q').body;
      released.getReader().releaseLock();
      const read = new Response('w').body;
      read.getReader().read();
      let disturbed = '';
      try { new Response(read); } catch (e) { disturbed = e.name; }
      const json = (await new Response(new Response('{"k":1}').body).json()).k;
      const bytes = [...await new Response(new Response(new Uint8Array([7, 8])).body).bytes()];
      const surrogate = await new Response(new Response('a\ud800b').body).text();
      return Response.json({ before, text, after, again, reads, teed, released: await new Response(released).text(),
                             disturbed, json, bytes, surrogate: surrogate === 'a\ufffdb' });
    } };
  )");
  CHECK(Fetch(runtime, "https://example.com/") ==
        R"({"before":[true,false,false,false],"text":"h)"
        "\xc3\xa9"
        R"(llo","after":[true,true,true],"again":"TypeError","reads":[[1,2],false,[3,4,5],false,[],true],)"
        R"("teed":["abc","abc"],"released":"q","disturbed":"TypeError","json":1,"bytes":[7,8],"surrogate":true})");
}

TEST_CASE("web api: a re-wrapped unread body returned to the host gives its UTF-8 and leaves its stream read") {
  auto runtime = Load(R"(
    let kept = null;
    export default { async fetch(request) {
      if (kept !== null) {
        let refused = '';
        try { new Response(kept); } catch (e) { refused = e.name; }
        return Response.json({ locked: kept.locked, refused });
      }
      const r = new Response('a\ud800b');
      kept = r.body;
      return new Response(kept, r);
    } };
  )");
  // A lone surrogate is U+FFFD's bytes, as the stream's UTF-8 had it.
  CHECK(Fetch(runtime, "https://example.com/") ==
        "a\xef\xbf\xbd"
        "b");
  CHECK(Fetch(runtime, "https://example.com/") == R"({"locked":true,"refused":"TypeError"})");
}
