// The worker runtime's bundled npm libraries are mapped through the bundle's
// embedded source map: their frames name the package file, never a line of
// the generated bundle or a path of the machine that built heapprof.
#include <catch2/catch.hpp>

#include <algorithm>
#include <set>
#include <string>

#include "heapprof/core/symbolizer.h"
#include "heapprof/runtime/runtime_source_maps.h"
#include "heapprof/runtime/worker_prelude.h"
#include "heapprof/runtime/worker_runtime.h"

using namespace heapprof;

namespace {

const std::string kPrefix = std::string(internal::kWorkerLibrariesName) + "/";
const std::string kPreludePrefix = std::string(internal::kWorkerPreludeName) + "/";

// Answers every script with one fixed result, counting the questions.
class FixedProvider final : public SourceMapProvider {
 public:
  explicit FixedProvider(const SourceMap* map) : map_(map) {}
  Result<const SourceMap*> MapFor(std::string_view) override {
    ++asked;
    return map_;
  }
  int asked = 0;

 private:
  const SourceMap* map_;
};

}  // namespace

TEST_CASE("the embedded map names each bundled package file under the libraries' script name", "[runtime_maps]") {
  Result<const SourceMap*> map = RuntimeLibrariesSourceMap();
  REQUIRE(map.ok());
  const std::vector<std::string>& sources = map.value()->sources();
  REQUIRE_FALSE(sources.empty());
  std::set<std::string> packages;
  for (const std::string& s : sources) {
    INFO(s);
    REQUIRE(s.starts_with(kPrefix));  // the name RuntimeLibrariesMap.cmake gives agrees with kWorkerLibrariesName
    // Nothing of the build machine: no folders above the package, no install tree.
    CHECK(s.find("..") == std::string::npos);
    CHECK(s.find("node_modules") == std::string::npos);
    CHECK(s.find("//") == std::string::npos);
    std::string rest = s.substr(kPrefix.size());
    packages.insert(rest.substr(0, rest.find('/')));
  }
  CHECK(packages.count("web-streams-polyfill") == 1);
  CHECK(packages.count("urlpattern-polyfill") == 1);

  // The map is the embedded bundle's: it covers its lines and no more.
  const std::string bundle = internal::kWorkerLibrariesSource;
  const size_t bundle_lines = static_cast<size_t>(std::count(bundle.begin(), bundle.end(), '\n')) + 1;
  CHECK(map.value()->generated_lines() <= bundle_lines);
  CHECK(map.value()->generated_lines() > bundle_lines * 9 / 10);
  // Parsed once for the process.
  CHECK(RuntimeLibrariesSourceMap().value() == map.value());
}

TEST_CASE("HTMLRewriter's engine script has its own map, its sources named under the libraries' prefix",
          "[runtime_maps]") {
  Result<const SourceMap*> map = RuntimeHtmlRewriterSourceMap();
  REQUIRE(map.ok());
  bool glue = false;
  for (const std::string& s : map.value()->sources()) {
    INFO(s);
    REQUIRE(s.starts_with(kPrefix));
    CHECK(s.find("..") == std::string::npos);
    CHECK(s.find("node_modules") == std::string::npos);
    glue = glue || s == kPrefix + "html-rewriter-wasm/dist/html_rewriter.js";
  }
  CHECK(glue);
  const std::string bundle = internal::kWorkerHtmlRewriterSource;
  const size_t bundle_lines = static_cast<size_t>(std::count(bundle.begin(), bundle.end(), '\n')) + 1;
  CHECK(map.value()->generated_lines() <= bundle_lines);
  CHECK(map.value()->generated_lines() > bundle_lines * 9 / 10);
  RuntimeSourceMapProvider provider;
  CHECK(provider.MapFor(internal::kWorkerHtmlRewriterName).value() == map.value());
}

TEST_CASE("the runtime provider answers the libraries' script and hands every other to the worker's",
          "[runtime_maps]") {
  FixedProvider others(nullptr);
  RuntimeSourceMapProvider provider(&others);
  Result<const SourceMap*> libs = provider.MapFor(internal::kWorkerLibrariesName);
  REQUIRE(libs.ok());
  CHECK(libs.value() == RuntimeLibrariesSourceMap().value());
  CHECK(others.asked == 0);
  Result<const SourceMap*> worker = provider.MapFor("/w/worker.js");
  REQUIRE(worker.ok());
  CHECK(worker.value() == nullptr);
  CHECK(others.asked == 1);
  // The prelude is bundled from its modules, with its own map.
  CHECK(provider.MapFor(internal::kWorkerPreludeName).value() == RuntimePreludeSourceMap().value());
  RuntimeSourceMapProvider alone;
  CHECK(alone.MapFor("/w/worker.js").value() == nullptr);
}

TEST_CASE("a worker's URLPattern and stream frames are named by package file after symbolization", "[runtime_maps]") {
  WorkerOptions options;
  options.name = "libraries";
  Result<WorkerRuntime> created = WorkerRuntime::Create(options);
  REQUIRE(created.ok());
  WorkerRuntime& runtime = created.value();
  SessionOptions session_options;
  session_options.interval_bytes = 4 * 1024;
  auto session = runtime.StartSession(session_options);
  REQUIRE(session.ok());
  REQUIRE(runtime
              .Load(R"(
    export default {
      async fetch(request) {
        let matched = 0;
        for (let i = 0; i < 200; i++) {
          if (new URLPattern({ pathname: '/items/:id' }).exec('https://a.example/items/' + i)) matched++;
        }
        const chunks = [];
        const source = new ReadableStream({ start(c) { for (let i = 0; i < 50; i++) c.enqueue('chunk ' + i); c.close(); } });
        await source.pipeTo(new WritableStream({ write(chunk) { chunks.push(chunk); } }));
        return new Response(matched + ' ' + chunks.length);
      },
    };
  )",
                    "worker.js")
              .ok());
  for (int i = 0; i < 20; ++i) REQUIRE(runtime.Dispatch(SyntheticRequest(static_cast<uint64_t>(i))).ok());
  auto profile = runtime.StopSession(std::move(session).value());
  REQUIRE(profile.ok());

  auto files = [&] {
    std::set<std::string> out;
    for (const Function& f : profile->functions) out.insert(std::string(profile->str(f.filename)));
    return out;
  };
  REQUIRE(files().count(internal::kWorkerLibrariesName) == 1);  // the bundle, before mapping

  RuntimeSourceMapProvider provider;
  SymbolizeResult result = Symbolize(profile.value(), provider);
  CHECK(result.warnings.empty());
  bool urlpattern = false, streams = false;
  for (const Function& f : profile->functions) {
    const std::string file(profile->str(f.filename));
    const std::string name(profile->str(f.name));
    INFO(file << " " << name);
    // Every library and prelude frame is mapped (the prelude's to its modules); the worker keeps its name.
    // But for the glue that loads them at their first use, which no source has: the libraries bundle's
    // loader (`load` and esbuild's wrapper, on the bundle's first two lines, WorkerPrelude.cmake) and
    // esbuild's lazy-module helpers (__init, __toCommonJS, ...) and the getter __copyProps defines
    // (`get: () => from[key]`, which V8 names "get"), sampled when a lazy module's export is read through it.
    // The prelude's second script's wrapper (workerApis and esbuild's IIFE, its first two lines) likewise.
    const bool glue = name.starts_with("__") || name == "load" || name == "get" || name == "workerApis" ||
                      name.starts_with(std::string("(anonymous ") + internal::kWorkerLibrariesName + ":1:") ||
                      name.starts_with(std::string("(anonymous ") + internal::kWorkerLibrariesName + ":2:") ||
                      name.starts_with(std::string("(anonymous ") + internal::kWorkerApisName + ":1:") ||
                      name.starts_with(std::string("(anonymous ") + internal::kWorkerApisName + ":2:");
    if (file.starts_with("heapprof:") && !glue) {
      CHECK((file.starts_with(kPreludePrefix) || file.starts_with(kPrefix)));
    }
  }
  for (const std::string& file : files()) {
    urlpattern = urlpattern || file == kPrefix + "urlpattern-polyfill/dist/urlpattern.js";
    streams = streams || file.starts_with(kPrefix + "web-streams-polyfill/dist/");
  }
  CHECK(urlpattern);
  CHECK(streams);
  CHECK(files().count("worker.js") == 1);
}

TEST_CASE("the prelude's map names one module per Web API under heapprof:runtime/", "[runtime_maps]") {
  Result<const SourceMap*> map = RuntimePreludeSourceMap();
  REQUIRE(map.ok());
  // The prelude's second script (the Web APIs off the request path) names its modules alike.
  RuntimeSourceMapProvider provider;
  Result<const SourceMap*> apis = provider.MapFor(internal::kWorkerApisName);
  REQUIRE(apis.ok());
  REQUIRE(apis.value() != nullptr);
  std::set<std::string> sources(map.value()->sources().begin(), map.value()->sources().end());
  sources.insert(apis.value()->sources().begin(), apis.value()->sources().end());
  for (const std::string& s : sources) {
    INFO(s);
    REQUIRE(s.starts_with(kPreludePrefix));  // PreludeMap.cmake's prefix agrees with kWorkerPreludeName
    CHECK(s.find("..") == std::string::npos);
    CHECK(s.find("/js/") == std::string::npos);
    CHECK(s.ends_with(".js"));
  }
  for (const char* module :
       {"worker_prelude.js", "worker_apis.js", "headers.js", "url.js", "body.js", "request.js", "response.js",
        "events.js", "encoding.js", "streams.js", "crypto/subtle.js", "crypto/key.js"}) {
    INFO(module);
    CHECK(sources.count(kPreludePrefix + module) == 1);
  }
  const std::string bundle = internal::kWorkerPreludeSource;
  const size_t bundle_lines = static_cast<size_t>(std::count(bundle.begin(), bundle.end(), '\n')) + 1;
  CHECK(map.value()->generated_lines() <= bundle_lines);
  CHECK(map.value()->generated_lines() > bundle_lines * 9 / 10);
  CHECK(RuntimePreludeSourceMap().value() == map.value());
}

TEST_CASE("a worker's Headers and URL frames name the prelude's module after symbolization", "[runtime_maps]") {
  WorkerOptions options;
  options.name = "prelude";
  Result<WorkerRuntime> created = WorkerRuntime::Create(options);
  REQUIRE(created.ok());
  WorkerRuntime& runtime = created.value();
  SessionOptions session_options;
  session_options.interval_bytes = 1024;
  auto session = runtime.StartSession(session_options);
  REQUIRE(session.ok());
  REQUIRE(runtime
              .Load(R"(
    const kept = [];
    export default {
      async fetch(request) {
        for (let i = 0; i < 200; i++) {
          const h = new Headers();
          for (let j = 0; j < 8; j++) h.append('x-name-' + j + '-' + i, 'value ' + j);
          kept.push(h, new URL('https://a.example/items/' + i + '?q=' + i + '#f').searchParams);
        }
        return new Response(String(kept.length));
      },
    };
  )",
                    "worker.js")
              .ok());
  for (int i = 0; i < 10; ++i) REQUIRE(runtime.Dispatch(SyntheticRequest(static_cast<uint64_t>(i))).ok());
  auto profile = runtime.StopSession(std::move(session).value());
  REQUIRE(profile.ok());
  std::set<std::string> before;
  for (const Function& f : profile->functions) before.insert(std::string(profile->str(f.filename)));
  REQUIRE(before.count(internal::kWorkerPreludeName) == 1);  // the bundle, before mapping

  RuntimeSourceMapProvider provider;
  SymbolizeResult result = Symbolize(profile.value(), provider);
  CHECK(result.warnings.empty());
  std::set<std::string> functions_in_headers, functions_in_url;
  for (const Function& f : profile->functions) {
    const std::string file(profile->str(f.filename));
    const std::string name(profile->str(f.name));
    INFO(file << " " << name);
    // No frame left at a line of the bundle, but for esbuild's lazy-module
    // glue, which no source has: URL's module loads at the worker's first URL
    // (__init, __toCommonJS and the getters __copyProps defines, named "get").
    const bool glue = name.starts_with("__") || name == "get";
    if (!glue) CHECK(file != internal::kWorkerPreludeName);
    if (file == kPreludePrefix + "headers.js") functions_in_headers.insert(std::string(profile->str(f.name)));
    if (file == kPreludePrefix + "url.js") functions_in_url.insert(std::string(profile->str(f.name)));
  }
  CHECK(functions_in_headers.count("append") == 1);
  CHECK(functions_in_url.count("URL") == 1);
}
