// run --runtime workerd's config writer (the bindings each configuration key
// becomes) and its reading of workerd's --verbose log (the worker's uncaught
// exceptions). The config is served by a real workerd in
// tests/cli/workerd_bindings_test.sh; these cases pin its text and the log's
// shapes, as workerd 2026-11 writes them.
#include <catch2/catch.hpp>

#include "heapprof/remote/workerd_config.h"
#include "heapprof/remote/workerd_log.h"

using namespace heapprof;
using namespace heapprof::remote;

namespace {

WorkerConfig Configured() {
  Result<WorkerConfig> config = ParseWorkerConfig(R"(
name = "shop"
compatibility_date = "2025-01-01"
compatibility_flags = ["nodejs_compat"]
[vars]
MODE = "prod"
LIMITS = { burst = 10 }
[[kv_namespaces]]
binding = "CACHE"
id = "x"
[[durable_objects.bindings]]
name = "CARTS"
class_name = "Cart"
[[migrations]]
tag = "v1"
new_sqlite_classes = ["Cart"]
[[services]]
binding = "AUTH"
service = "auth"
entrypoint = "Admin"
)",
                                                  "wrangler.toml", true);
  REQUIRE(config.ok());
  config->bindings.kv.front().entries = {{"greeting", "hello \"you\""}};
  return std::move(config).value();
}

}  // namespace

TEST_CASE("workerd config: every binding of the configuration, a KV store service and the outbound worker") {
  WorkerdSpec spec;
  spec.worker = WorkerdWorkerFor(Configured(), "shop", "dist/worker.js");
  spec.outbound = "handler.js";
  spec.v8_flags = {"--no-turbo-inlining"};
  std::vector<WorkerdModule> modules = {{"worker.js", "worker.js", true, {}},
                                        {"handler.js", "worker-1/handler.js", true, {}}};
  WorkerdConfigText text = WorkerdConfig(spec, modules, 8123);
  const std::string& c = text.capnp;
  CHECK_THAT(c, Catch::Contains(R"((name = "MODE", text = "prod"))"));
  CHECK_THAT(c, Catch::Contains(R"((name = "LIMITS", json = "{\"burst\":10}"))"));
  CHECK_THAT(c, Catch::Contains(R"((name = "CACHE", kvNamespace = "shop-kv-CACHE"))"));
  CHECK_THAT(c, Catch::Contains(R"((name = "CARTS", durableObjectNamespace = (className = "Cart")))"));
  CHECK_THAT(c, Catch::Contains(R"((className = "Cart", uniqueKey = "shop-Cart", enableSql = true))"));
  CHECK_THAT(c, Catch::Contains("durableObjectStorage = (inMemory = void)"));
  CHECK_THAT(c, Catch::Contains(R"((name = "AUTH", service = (name = "auth", entrypoint = "Admin")))"));
  CHECK_THAT(c, Catch::Contains(R"(compatibilityFlags = [ "nodejs_compat" ])"));
  CHECK_THAT(c, Catch::Contains(R"(globalOutbound = "heapprof-outbound")"));
  CHECK_THAT(c, Catch::Contains(R"((name = "heapprof-outbound", worker = ()"));
  CHECK_THAT(c, Catch::Contains(R"(esModule = embed "worker-1/handler.js")"));
  CHECK_THAT(c, Catch::Contains(R"(address = "127.0.0.1:8123")"));
  CHECK_THAT(c, Catch::Contains(R"(service = "shop")"));
  // The KV store's preloaded entries and its module are files beside the config.
  REQUIRE(text.files.size() == 2);
  CHECK(text.files[0].first == "kv-0-0.json");
  CHECK(text.files[0].second == R"({"greeting":"hello \"you\""})");
  CHECK(text.files[1].first == "heapprof-kv-store.js");
  CHECK_THAT(text.files[1].second, Catch::Contains("CF-KV-Metadata"));
  CHECK_THAT(c, Catch::Contains(R"(json = embed "kv-0-0.json")"));
}

TEST_CASE("workerd config: a worker without bindings has no storage, store or outbound") {
  WorkerdSpec spec;
  spec.worker.service = "main";
  spec.worker.script = "w.js";
  WorkerdConfigText text = WorkerdConfig(spec, {{"w.js", "w.js", false, {}}}, 1);
  CHECK(text.files.empty());
  CHECK_THAT(text.capnp, Catch::Contains(R"(serviceWorkerScript = embed "w.js")"));
  CHECK_THAT(text.capnp, !Catch::Contains("durableObject"));
  CHECK_THAT(text.capnp, !Catch::Contains("globalOutbound"));
}

TEST_CASE("workerd log: uncaught exceptions with their stacks, rejected or thrown, values that are not Errors") {
  const std::string log =
      "workerd/io/worker.c++:3042: info: uncaught exception; source = Uncaught (in promise); stack = TypeError: "
      "boom\n"
      "    at deep (t.js:1:39)\n"
      "    at Object.fetch (t.js:4:31)\n"
      "workerd/io/io-context.c++:656: info: uncaught exception; exception = workerd/jsg/value.h:1456: failed: "
      "jsg.TypeError: boom\n"
      "stack: /x/workerd@3f68b70\n"
      "workerd/server/server/listen/mod.rs:372: error: Uncaught exception: failed: remote.jsg.TypeError: boom\n"
      "logged by console.log\n"
      "workerd/io/worker.c++:3049: info: uncaught exception; source = Uncaught; exception = a string\n"
      "workerd/io/worker.c++:3042: info: uncaught exception; source = Uncaught (in promise); stack = Error: "
      "internal error; reference = abc123\n";
  std::vector<WorkerdException> found = ParseWorkerdExceptions(log);
  REQUIRE(found.size() == 3);
  CHECK(found[0].rejected);
  CHECK(found[0].description == "TypeError: boom\n    at deep (t.js:1:39)\n    at Object.fetch (t.js:4:31)");
  CHECK_FALSE(found[1].rejected);
  CHECK(found[1].description == "Uncaught a string");
  CHECK(found[2].description == "Error: internal error");  // one error, whatever its reference
  CHECK(ParseWorkerdExceptions("no exceptions here\n").empty());
}

TEST_CASE("workerd log: a stack's module names become the script's path") {
  CHECK(WithModulePath("TypeError: t.js: bad\n    at deep (t.js:1:39)\n    at t.js:2:3\n    at other (u.js:1:1)",
                       "t.js", "/app/dist/t.js") ==
        "TypeError: t.js: bad\n    at deep (/app/dist/t.js:1:39)\n    at /app/dist/t.js:2:3\n    at other (u.js:1:1)");
}

TEST_CASE("workerd config: a Durable Object class of another worker is bound by that worker's service") {
  auto config = ParseWorkerConfig(
      "name = \"shop\"\n[[durable_objects.bindings]]\nname = \"INV\"\nclass_name = \"Inventory\"\n"
      "script_name = \"stock\"\n[[durable_objects.bindings]]\nname = \"OWN\"\nclass_name = \"Own\"\n"
      "script_name = \"shop\"\n",
      "w.toml", true);
  REQUIRE(config.ok());
  WorkerdSpec spec;
  spec.worker = WorkerdWorkerFor(config.value(), "shop", "w.js");
  const std::string c = WorkerdConfig(spec, {{"w.js", "w.js", true, {}}}, 1).capnp;
  CHECK_THAT(c, Catch::Contains(
                    R"((name = "INV", durableObjectNamespace = (className = "Inventory", serviceName = "stock")))"));
  // script_name naming the worker itself is its own class, and its own namespace.
  CHECK_THAT(c, Catch::Contains(R"((name = "OWN", durableObjectNamespace = (className = "Own")))"));
  CHECK_THAT(c, Catch::Contains(R"((className = "Own", uniqueKey = "shop-Own"))"));
  CHECK_THAT(c, !Catch::Contains(R"(className = "Inventory", uniqueKey)"));
}

TEST_CASE("workerd log: the Durable Object classes no worker exports") {
  const std::string log =
      "workerd/server/server/worker.rs:468: warning: A DurableObjectNamespace in the config referenced the class "
      "\"Inventory\", but no such Durable Object class is exported from the worker. Please make sure ...\n"
      "workerd/io/worker.c++:3042: info: uncaught exception; source = Uncaught; stack = Error: referenced the class "
      "\"Nope\"\n"
      "workerd/server/server/worker.rs:468: warning: A DurableObjectNamespace in the config referenced the class "
      "\"Inventory\", but no such Durable Object class is exported from the worker.\n";
  CHECK(UnexportedDurableObjectClasses(log) == std::vector<std::string>{"Inventory"});
  CHECK(UnexportedDurableObjectClasses("serving\n").empty());
}

TEST_CASE("workerd config: a bundle's text, data and wasm modules beside its entry, by wrangler's module types") {
  WorkerdSpec spec;
  spec.worker.service = "w";
  spec.worker.script = "index.js";
  WorkerdModule m{"index.js", "index.js", true, {}};
  m.extras = {{"ab12-greeting.txt", "ab12-greeting.txt", ModuleType::kText},
              {"cd34-table.bin", "cd34-table.bin", ModuleType::kData},
              {"ef56-add.wasm", "ef56-add.wasm", ModuleType::kCompiledWasm},
              {"chunk.js", "chunk.js", ModuleType::kEsModule}};
  const std::string c = WorkerdConfig(spec, {m}, 1).capnp;
  CHECK_THAT(c, Catch::Contains(R"(modules = [ (name = "index.js", esModule = embed "index.js"), )"
                                R"((name = "ab12-greeting.txt", text = embed "ab12-greeting.txt"), )"
                                R"((name = "cd34-table.bin", data = embed "cd34-table.bin"), )"
                                R"((name = "ef56-add.wasm", wasm = embed "ef56-add.wasm"), )"
                                R"((name = "chunk.js", esModule = embed "chunk.js") ],)"));
}
