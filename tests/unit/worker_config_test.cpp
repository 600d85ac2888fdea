// The configuration model: every wrangler key read from TOML and JSONC, the
// loader's files and flags, and what each runtime's support makes of them
// (one warning line, or an error for a binding the code would call).
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "heapprof/workload/worker_config.h"
#include "unit/test_dirs.h"

using namespace heapprof;

namespace {

namespace fs = std::filesystem;
using Vars = std::vector<std::pair<std::string, std::string>>;
using Strings = std::vector<std::string>;

constexpr const char* kFull = R"(
name = "shop"
main = "dist/index.js"
compatibility_date = "2025-01-01"
compatibility_flags = ["nodejs_compat", "streams_enable_constructors"]
account_id = "abc"
workers_dev = true
mystery = 1

[vars]
MODE = "prod"

[[kv_namespaces]]
binding = "CACHE"
id = "x"

[[durable_objects.bindings]]
name = "COUNTER"
class_name = "Counter"

[[durable_objects.bindings]]
name = "ROOMS"
class_name = "ChatRoom"

[[migrations]]
tag = "v1"
new_classes = ["Counter", "Room"]

[[migrations]]
tag = "v2"
renamed_classes = [{ from = "Room", to = "ChatRoom" }]
new_sqlite_classes = ["Ledger"]

[[migrations]]
tag = "v3"
deleted_classes = ["Ledger"]

[[services]]
binding = "AUTH"
service = "auth-worker"
entrypoint = "Verify"

[[r2_buckets]]
binding = "FILES"
bucket_name = "files"

[[d1_databases]]
binding = "DB"
database_name = "main"
database_id = "id"

[[queues.producers]]
binding = "JOBS"
queue = "jobs"

[[queues.consumers]]
queue = "jobs"
max_batch_size = 5

[triggers]
crons = ["*/5 * * * *"]

[define]
VERSION = "\"1.2\""

[alias]
"node-fetch" = "./shims/fetch.js"
)";

RuntimeSupport Embedded() {
  RuntimeSupport s;
  s.runtime = "the embedded runtime";
  s.keys = {"name", "main", "vars", "kv_namespaces", "compatibility_date"};
  s.partly = {{"compatibility_date", "recorded only"}};
  s.instead = "run it with --runtime workerd";
  return s;
}

}  // namespace

TEST_CASE("worker config: every key of a wrangler.toml") {
  auto c = ParseWorkerConfig(kFull, "wrangler.toml", /*toml=*/true);
  REQUIRE(c.ok());
  CHECK(c->name == "shop");
  CHECK(c->main == "dist/index.js");
  CHECK(c->compatibility_date == "2025-01-01");
  CHECK(c->compatibility_flags == Strings{"nodejs_compat", "streams_enable_constructors"});
  CHECK(c->bindings.vars == Vars{{"MODE", "\"prod\""}});
  REQUIRE(c->bindings.kv.size() == 1);
  REQUIRE(c->durable_objects.size() == 2);
  CHECK(c->durable_objects[1].name == "ROOMS");
  CHECK(c->durable_objects[1].class_name == "ChatRoom");
  REQUIRE(c->migrations.size() == 3);
  CHECK(c->migrations[1].renamed_classes == Vars{{"Room", "ChatRoom"}});
  // Room renamed to ChatRoom; Ledger created (SQLite) then deleted.
  auto classes = c->DurableObjectClasses();
  REQUIRE(classes.size() == 2);
  CHECK(classes[0].name == "Counter");
  CHECK(classes[1].name == "ChatRoom");
  REQUIRE(c->services.size() == 1);
  CHECK(c->services[0].service == "auth-worker");
  CHECK(c->services[0].entrypoint == "Verify");
  CHECK(c->r2_buckets[0].target == "files");
  CHECK(c->d1_databases[0].target == "main");
  CHECK(c->queue_producers[0].target == "jobs");
  REQUIRE(c->queue_consumers.size() == 1);
  CHECK(c->queue_consumers[0].max_batch_size == 5);
  CHECK(c->crons == Strings{"*/5 * * * *"});
  CHECK(c->define == Vars{{"VERSION", "\"1.2\""}});
  CHECK(c->alias == Vars{{"node-fetch", "./shims/fetch.js"}});
  CHECK(std::find(c->keys.begin(), c->keys.end(), "queues.producers") != c->keys.end());
  CHECK(std::find(c->keys.begin(), c->keys.end(), "queues") == c->keys.end());
}

TEST_CASE("worker config: wrangler.jsonc, and bad shapes are errors naming the file and entry") {
  auto c = ParseWorkerConfig(R"({
    // a Durable Object worker
    "name": "do", "main": "index.js",
    "durable_objects": { "bindings": [{ "name": "C", "class_name": "Counter" }] },
    "migrations": [{ "tag": "v1", "new_sqlite_classes": ["Counter"] }]
  })",
                             "wrangler.jsonc", /*toml=*/false);
  REQUIRE(c.ok());
  auto classes = c->DurableObjectClasses();
  REQUIRE(classes.size() == 1);
  CHECK(classes[0].sqlite);
  CHECK(ParseWorkerConfig("[[durable_objects.bindings]]\nname = \"C\"\n", "w.toml", true).status().message() ==
        "w.toml: durable_objects: bindings[0]: needs class_name (a string)");
  CHECK(ParseWorkerConfig("compatibility_flags = \"nodejs_compat\"\n", "w.toml", true).status().message() ==
        "w.toml: compatibility_flags must be an array of strings");
  CHECK(ParseWorkerConfig("[[queues.consumers]]\nqueue = \"q\"\nmax_batch_size = 500\n", "w.toml", true)
            .status()
            .message() == "w.toml: queues: consumers[0]: max_batch_size must be a whole number from 1 to 100");
}

TEST_CASE("worker config: a runtime's support: needed keys are errors, the rest one warning line") {
  auto c = ParseWorkerConfig(kFull, "wrangler.toml", true);
  REQUIRE(c.ok());
  c->file = "wrangler.toml";
  auto refused = CheckWorkerConfig(c.value(), Embedded(), {});
  REQUIRE_FALSE(refused.ok());
  const std::string& m = refused.status().message();
  for (const char* key : {"compatibility flag nodejs_compat", "durable_objects (", "services (", "r2_buckets (",
                          "d1_databases (", "queues.producers ("}) {
    CHECK_THAT(m, Catch::Contains(key));
  }
  CHECK_THAT(m, Catch::Contains("run it with --runtime workerd, or give --ignore-config-key KEY"));
  // Ignored on request, each is named in the one warning line with the rest.
  auto warned = CheckWorkerConfig(
      c.value(), Embedded(),
      {"nodejs_compat", "durable_objects", "services", "r2_buckets", "d1_databases", "queues.producers"});
  REQUIRE(warned.ok());
  CHECK(warned->warning.find('\n') == std::string::npos);
  for (const char* key :
       {"compatibility_date (recorded only)", "compatibility flag nodejs_compat (--ignore-config-key)",
        "compatibility flag streams_enable_constructors", "account_id (deploy only)", "workers_dev",
        "mystery (unknown to heapprof)", "durable_objects (", "migrations (", "services (", "triggers (",
        "queues.consumers (", "define (", "alias (", "r2_buckets ("}) {
    CHECK_THAT(warned->warning, Catch::Contains(key));
  }
  CHECK_THAT(warned->warning, Catch::StartsWith("wrangler.toml: not honoured by the embedded runtime: "));
  CHECK_THAT(warned->warning, !Catch::Contains("vars (") && !Catch::Contains("kv_namespaces ("));
  // --ignore-config-key must name something the configuration has.
  CHECK(CheckWorkerConfig(c.value(), Embedded(), {"hyperdrive"}).status().message() ==
        "--ignore-config-key hyperdrive: wrangler.toml has no such key or compatibility flag");
}

TEST_CASE("worker config: a key the runtime honours but --ignore-config-key names goes into the warning") {
  auto c = ParseWorkerConfig("name = \"a\"\n[[durable_objects.bindings]]\nname = \"C\"\nclass_name = \"Counter\"\n",
                             "w.toml", true);
  REQUIRE(c.ok());
  c->file = "w.toml";
  RuntimeSupport support = Embedded();
  support.keys.push_back("durable_objects");
  auto honoured = CheckWorkerConfig(c.value(), support, {});
  REQUIRE(honoured.ok());
  CHECK(honoured->warning.empty());
  auto ignored = CheckWorkerConfig(c.value(), support, {"durable_objects"});
  REQUIRE(ignored.ok());
  CHECK_THAT(ignored->warning, Catch::Contains("durable_objects (Durable Object namespaces; --ignore-config-key)"));
}

TEST_CASE("worker config: a Durable Object class of another script is refused by a runtime that runs one worker") {
  auto c = ParseWorkerConfig(
      "name = \"a\"\n[[durable_objects.bindings]]\nname = \"C\"\nclass_name = \"Counter\"\n"
      "script_name = \"b\"\n",
      "w.toml", true);
  REQUIRE(c.ok());
  c->file = "w.toml";
  RuntimeSupport one;
  one.runtime = "the one-worker runtime";
  one.keys = {"name", "durable_objects"};
  one.all_compatibility_flags = true;
  one.instead = "run it elsewhere";
  auto refused = CheckWorkerConfig(c.value(), one, {});
  REQUIRE_FALSE(refused.ok());
  CHECK_THAT(refused.status().message(), Catch::Contains("durable_objects binding C has script_name = \"b\""));
  CHECK_THAT(refused.status().message(), Catch::Contains("which the one-worker runtime does not run"));
  CHECK_THAT(refused.status().message(), Catch::Contains("run it elsewhere --service b=FOLDER"));
  CHECK(CheckWorkerConfig(c.value(), one, {"durable_objects"}).ok());
  c->durable_objects[0].script_name = "a";  // its own name: its own class
  CHECK(CheckWorkerConfig(c.value(), one, {}).ok());
  // A runtime that runs other workers finds the script itself.
  c->durable_objects[0].script_name = "b";
  RuntimeSupport several = one;
  several.other_workers = true;
  CHECK(CheckWorkerConfig(c.value(), several, {}).ok());
}

TEST_CASE("worker config: LoadWorkerConfig reads a folder, .dev.vars, flags and data files") {
  fs::path dir = heapprof::testing::BinaryDir() / "test-worker-config";
  fs::remove_all(dir);
  fs::create_directories(dir / "dist");
  std::ofstream(dir / "dist/index.js") << "export default {};\n";
  std::ofstream(dir / "wrangler.toml")
      << "main = \"dist/index.js\"\ncompatibility_date = \"2024-01-01\"\n"
         "[vars]\nGREETING = \"hi\"\n[[kv_namespaces]]\nbinding = \"CACHE\"\nid = \"x\"\n";
  std::ofstream(dir / ".dev.vars") << "TOKEN=abc\n";
  std::ofstream(dir / "cache.json") << R"({"k": "v"})";
  WorkerConfigSources sources;
  sources.worker = dir.string();
  sources.kv_data = {"CACHE=" + (dir / "cache.json").string()};
  sources.compatibility_date = "2025-06-01";
  sources.compatibility_flags = {"nodejs_compat"};
  auto loaded = LoadWorkerConfig(sources);
  REQUIRE(loaded.ok());
  CHECK(loaded->main == (dir / "dist/index.js").string());
  CHECK(loaded->bindings.vars == Vars{{"GREETING", "\"hi\""}, {"TOKEN", "\"abc\""}});
  CHECK(loaded->secrets == Strings{"TOKEN"});
  REQUIRE(loaded->bindings.kv.size() == 1);
  CHECK(loaded->bindings.kv[0].entries == Vars{{"k", "v"}});
  CHECK(loaded->files.size() == 3);
  CHECK(loaded->compatibility_date == "2025-06-01");
  CHECK(loaded->compatibility_flags == Strings{"nodejs_compat"});

  // Every file named and missing is an error naming its flag.
  sources.kv_data = {"nofile"};
  CHECK(LoadWorkerConfig(sources).status().message() == "--kv-data nofile: expected BINDING=FILE");
  sources.kv_data = {"CACHE=" + (dir / "missing.json").string()};
  CHECK_THAT(LoadWorkerConfig(sources).status().message(), Catch::StartsWith("--kv-data CACHE="));
  sources.kv_data = {};
  sources.env_json = (dir / "missing.json").string();
  CHECK_THAT(LoadWorkerConfig(sources).status().message(), Catch::StartsWith("--env-json: "));
  sources.env_json = "";
  sources.config = (dir / "missing.toml").string();
  CHECK_THAT(LoadWorkerConfig(sources).status().message(), Catch::StartsWith("--config: no such file: "));
  // A folder whose main is not built yet.
  sources.config = "";
  std::ofstream(dir / "wrangler.toml") << "main = \"src/index.ts\"\n";
  CHECK_THAT(LoadWorkerConfig(sources).status().message(),
             Catch::Contains("which is not a file (bundle the worker first)"));
}

TEST_CASE("worker config: docs/remote.md's table names every config key heapprof knows") {
  // The table of what each runtime honours must say where every key goes: a
  // key added to KnownConfigKeys without a row fails here.
  std::ifstream in(heapprof::testing::SourceDir() / "docs" / "remote.md");
  REQUIRE(in.good());
  std::string table, line;
  bool inside = false;
  while (std::getline(in, line)) {
    if (line.starts_with("| config key |")) inside = true;
    if (inside && !line.starts_with("|")) break;
    if (inside) table += line + "\n";
  }
  REQUIRE_FALSE(table.empty());
  for (const ConfigKeyInfo& info : KnownConfigKeys()) {
    const std::string key = info.key;
    const bool named = table.find("`" + key + "`") != std::string::npos ||
                       table.find("`[" + key + "]`") != std::string::npos ||
                       table.find("`[[" + key + "]]`") != std::string::npos;
    INFO("config key " << key);
    CHECK(named);
  }
}

TEST_CASE("worker config: every key of the schema wrangler ships is honoured or named in the warning") {
  // The schema of the wrangler the project corpus pins (tools/bootstrap.sh
  // installs it): a key wrangler adds that heapprof does not know would be
  // neither honoured nor named, and fails here.
  const std::filesystem::path schema_file =
      heapprof::testing::SourceDir() / "tests/projects/node_modules/wrangler/config-schema.json";
  std::ifstream in(schema_file);
  REQUIRE(in.good());
  const nlohmann::json schema = nlohmann::json::parse(in);
  const nlohmann::json& config = schema.at("definitions").at("RawConfig").at("properties");
  REQUIRE(config.size() > 50);
  std::vector<std::string> known;
  for (const ConfigKeyInfo& info : KnownConfigKeys()) known.push_back(info.key);
  for (const auto& [key, unused] : config.items()) {
    INFO("wrangler's config key " << key);
    // queues is known as its two parts, queues.producers and queues.consumers.
    const bool found = std::any_of(known.begin(), known.end(),
                                   [&](const std::string& k) { return k == key || k.starts_with(key + "."); });
    CHECK(found);
  }
  // The keys an [env.NAME] section does not inherit: every key whose
  // description says "NOT inherited" is in heapprof's list.
  const nlohmann::json& environment = schema.at("definitions").at("RawEnvironment").at("properties");
  for (const auto& [key, value] : environment.items()) {
    const std::string description = value.value("description", "");
    if (description.find("NOT inherited") == std::string::npos) continue;
    INFO("non-inheritable key " << key);
    CHECK(std::find(std::begin(kNotInheritedKeys), std::end(kNotInheritedKeys), key) != std::end(kNotInheritedKeys));
  }
}

TEST_CASE("worker config: --env selects an [env.NAME] section as wrangler does") {
  const char* toml = R"(
name = "shop"
main = "src/index.ts"
compatibility_date = "2025-01-01"
minify = true
[vars]
MODE = "prod"
[[kv_namespaces]]
binding = "CACHE"
id = "x"
[env.staging]
compatibility_date = "2025-06-01"
[env.staging.vars]
MODE = "staging"
[env.qa]
name = "shop-qa-named"
)";
  Result<WorkerConfig> top = ParseWorkerConfig(toml, "wrangler.toml", true);
  REQUIRE(top.ok());
  CHECK(top->name == "shop");
  CHECK(top->bindings.vars == std::vector<std::pair<std::string, std::string>>{{"MODE", "\"prod\""}});
  CHECK(std::find(top->keys.begin(), top->keys.end(), "env") == top->keys.end());
  Result<WorkerConfig> staging = ParseWorkerConfig(toml, "wrangler.toml", true, "staging");
  REQUIRE(staging.ok());
  CHECK(staging->name == "shop-staging");  // wrangler's name for an environment without its own
  CHECK(staging->compatibility_date == "2025-06-01");
  CHECK(staging->main == "src/index.ts");  // inherited
  CHECK(staging->minify);                  // inherited
  CHECK(staging->bindings.vars == std::vector<std::pair<std::string, std::string>>{{"MODE", "\"staging\""}});
  CHECK(staging->bindings.kv.empty());  // bindings are not inherited
  CHECK(staging->notes == std::vector<std::string>{"wrangler.toml: kv_namespaces is at the top level and not in "
                                                   "[env.staging]: not inherited, so env.staging has none"});
  Result<WorkerConfig> qa = ParseWorkerConfig(toml, "wrangler.toml", true, "qa");
  REQUIRE(qa.ok());
  CHECK(qa->name == "shop-qa-named");
  CHECK(qa->bindings.vars.empty());
  Result<WorkerConfig> none = ParseWorkerConfig(toml, "wrangler.toml", true, "prod");
  REQUIRE_FALSE(none.ok());
  CHECK(none.status().message() == "wrangler.toml: no environment \"prod\" (--env): it has qa, staging");
}
