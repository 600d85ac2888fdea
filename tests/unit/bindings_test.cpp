// Bindings from wrangler.toml, wrangler.jsonc, .dev.vars, --env-json and
// --kv-data files: values as JSON, malformed files an error naming the file.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "heapprof/workload/bindings.h"
#include "unit/test_dirs.h"

using namespace heapprof;

namespace {
using Vars = std::vector<std::pair<std::string, std::string>>;
}

TEST_CASE("bindings: wrangler.toml vars of every type and KV namespaces") {
  auto b = ParseWranglerToml(R"(
name = "shop"
main = "src/index.ts"
compatibility_date = "2024-09-01"

[vars]
API_HOST = "api.example.com"
RETRIES = 3
RATIO = 0.5
DEBUG = false
LIMITS = { burst = 10, tags = ["a", "b"] }

[[kv_namespaces]]
binding = "CACHE"
id = "0f2ac74b498b48028cb68387c421e279"

[[kv_namespaces]]
binding = "SESSIONS"
id = "1"
)",
                             "wrangler.toml");
  REQUIRE(b.ok());
  CHECK(b->vars == Vars{{"API_HOST", "\"api.example.com\""},
                        {"DEBUG", "false"},
                        {"LIMITS", R"({"burst":10,"tags":["a","b"]})"},
                        {"RATIO", "0.5"},
                        {"RETRIES", "3"}});
  REQUIRE(b->kv.size() == 2);
  CHECK(b->kv[0].binding == "CACHE");
  CHECK(b->kv[1].binding == "SESSIONS");
}

TEST_CASE("bindings: wrangler.jsonc with comments") {
  auto b = ParseWranglerJsonc(R"({
    // the shop worker
    "name": "shop",
    "vars": { "API_HOST": "api.example.com", /* inline */ "RETRIES": 3 },
    "kv_namespaces": [{ "binding": "CACHE", "id": "x" }]
  })",
                              "wrangler.jsonc");
  REQUIRE(b.ok());
  CHECK(b->vars == Vars{{"API_HOST", "\"api.example.com\""}, {"RETRIES", "3"}});
  REQUIRE(b->kv.size() == 1);
}

TEST_CASE("bindings: .dev.vars secrets, --env-json and KV data override and add") {
  WorkerBindings b;
  b.SetVar("API_HOST", "\"api.example.com\"");
  REQUIRE(ParseDevVars("# secrets\nAPI_TOKEN=s3cr3t\nexport QUOTED = \"a b\"\n\nAPI_HOST='staging.example.com'\n",
                       ".dev.vars", b)
              .ok());
  CHECK(b.vars == Vars{{"API_HOST", "\"staging.example.com\""}, {"API_TOKEN", "\"s3cr3t\""}, {"QUOTED", "\"a b\""}});
  REQUIRE(ParseEnvJson(R"({"FLAGS": {"beta": true}, "API_TOKEN": "t2"})", "env.json", b).ok());
  CHECK(b.vars[1] == std::pair<std::string, std::string>{"API_TOKEN", "\"t2\""});
  CHECK(b.vars.back() == std::pair<std::string, std::string>{"FLAGS", R"({"beta":true})"});
  KvNamespace kv{"CACHE", {}};
  REQUIRE(ParseKvData(R"({"user:1": "{\"name\":\"Ada\"}", "count": 7})", "cache.json", kv).ok());
  CHECK(kv.entries == Vars{{"count", "7"}, {"user:1", "{\"name\":\"Ada\"}"}});
}

TEST_CASE("bindings: JSONC as wrangler reads it: comments and trailing commas") {
  // create-cloudflare's templates end objects with a comma, after a comment too.
  auto b = ParseWranglerJsonc(R"({
    "name": "w", // the worker
    "observability": { "enabled": true, },
    "vars": { "A": "x,}", "B": [1, 2, /* last */ ], /* , */ },
  })",
                              "w.jsonc");
  REQUIRE(b.ok());
  CHECK(b->vars == Vars{{"A", "\"x,}\""}, {"B", "[1,2]"}});
  // A comma inside a string or a comment is left alone.
  auto strings = ParseWranglerJsonc(R"({"vars": {"S": "a, ]", "T": "\", }"}})", "w.jsonc");
  REQUIRE(strings.ok());
  CHECK(strings->vars == Vars{{"S", "\"a, ]\""}, {"T", R"("\", }")"}});
}

TEST_CASE("bindings: malformed files are errors naming the file") {
  CHECK(ParseWranglerToml("[vars\nX = 1", "w.toml").status().message().rfind("w.toml: not valid TOML: ", 0) == 0);
  CHECK(ParseWranglerToml("vars = 3", "w.toml").status().message() == "w.toml: vars must be a table of name = value");
  CHECK(ParseWranglerToml("[[kv_namespaces]]\nid = \"x\"", "w.toml").status().message() ==
        "w.toml: each kv_namespaces entry needs a binding (a string)");
  CHECK(ParseWranglerJsonc("{\n  \"vars\": {\"A\": 1 \"B\": 2}\n}", "w.jsonc")
            .status()
            .message()
            .rfind("w.jsonc: not valid JSON at line 2, column 21: ", 0) == 0);
  CHECK(ParseWranglerJsonc("{\"vars\": {\"A\": 1,,}}", "w.jsonc")
            .status()
            .message()
            .rfind("w.jsonc: not valid JSON at line 1, column ", 0) == 0);
  WorkerBindings b;
  CHECK(ParseDevVars("OK=1\nnot a pair\n", ".dev.vars", b).message() == ".dev.vars:2: expected NAME=value");
  CHECK(ParseEnvJson("[1]", "env.json", b).message() == "env.json: expected a JSON object of name: value");
  KvNamespace kv;
  CHECK(ParseKvData("nope", "kv.json", kv).message() == "kv.json: expected a JSON object of key: value");
}

TEST_CASE("bindings: LoadBindings finds wrangler.toml and .dev.vars beside the worker") {
  namespace fs = std::filesystem;
  fs::path dir = heapprof::testing::BinaryDir() / "test-bindings";
  fs::remove_all(dir);
  fs::create_directories(dir);
  std::ofstream(dir / "worker.js") << "export default {};\n";
  std::ofstream(dir / "wrangler.toml")
      << "[vars]\nGREETING = \"hi\"\n[[kv_namespaces]]\nbinding = \"CACHE\"\nid = \"x\"\n";
  std::ofstream(dir / ".dev.vars") << "TOKEN=abc\n";
  std::ofstream(dir / "cache.json") << R"({"k": "v"})";
  BindingSources sources;
  sources.worker = (dir / "worker.js").string();
  sources.kv_data = {"CACHE=" + (dir / "cache.json").string()};
  auto loaded = LoadBindings(sources);
  REQUIRE(loaded.ok());
  CHECK(loaded->bindings.vars == Vars{{"GREETING", "\"hi\""}, {"TOKEN", "\"abc\""}});
  REQUIRE(loaded->bindings.kv.size() == 1);
  CHECK(loaded->bindings.kv[0].entries == Vars{{"k", "v"}});
  CHECK(loaded->files.size() == 3);
  sources.kv_data = {"nofile"};
  CHECK(LoadBindings(sources).status().message() == "--kv-data nofile: expected BINDING=FILE");
  sources.kv_data = {};
  sources.config = (dir / "missing.toml").string();
  CHECK_FALSE(LoadBindings(sources).ok());
}
