// The smallest heapprof embedder: create an isolate, run a script, profile a
// window of it, write a pprof file. Usage: heapprof_embed_example [OUT.pb.gz]
#include <v8.h>

#include <cstdio>
#include <string>
#include <utility>

#include "heapprof/core/pprof.h"
#include "heapprof/core/query.h"
#include "heapprof/v8/session.h"
#include "heapprof/v8/v8_host.h"

namespace {

constexpr const char* kScript = R"JS(
const index = new Map();
function buildIndex(n) {
  for (let i = 0; i < n; ++i) index.set('key' + i, { id: i, tags: ['a', 'b', 'c'] });
  return index.size;
}
)JS";

int Fail(const char* what, const heapprof::Status& status) {
  std::fprintf(stderr, "embed: %s: %s\n", what, status.message().c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string out = argc > 1 ? argv[1] : "embed.pb.gz";

  // 1. An isolate with a heap limit (V8 is initialised on first use).
  heapprof::IsolateOptions isolate_options;
  isolate_options.heap_limit_bytes = 256u << 20;
  isolate_options.name = "embed";
  auto isolate = heapprof::Isolate::Create(isolate_options);
  if (!isolate.ok()) return Fail("create isolate", isolate.status());

  // 2. Sessions start and stop with the isolate entered.
  v8::Isolate::Scope isolate_scope(isolate->get());
  v8::HandleScope handle_scope(isolate->get());
  if (auto r = isolate->RunScript(kScript, "index.js"); !r.ok()) return Fail("load script", r.status());

  // 3. The window: everything allocated between Start and Stop is sampled.
  heapprof::SessionOptions session_options;
  session_options.interval_bytes = 32 * 1024;  // mean bytes between samples
  session_options.isolate_name = "embed";
  auto session = heapprof::Session::Start(isolate->get(), session_options);
  if (!session.ok()) return Fail("start session", session.status());
  if (auto r = isolate->RunScript("buildIndex(50000)", "main.js"); !r.ok()) return Fail("run", r.status());
  auto profile = std::move(session.value()).StopAndBuild();
  if (!profile.ok()) return Fail("stop session", profile.status());

  // 4. Write pprof (gzipped, atomically) and say what is still held.
  if (auto s = heapprof::WritePprofFile(out, profile.value()); !s.ok()) return Fail("write profile", s);
  auto retained =
      heapprof::RetainedBy(profile.value(), heapprof::FrameFilter{"^buildIndex$", "", heapprof::PatternSyntax::kRegex});
  if (!retained.ok()) return Fail("query", retained.status());
  std::printf("wrote %s: %zu samples; buildIndex retains %lld bytes\n", out.c_str(), profile->samples.size(),
              static_cast<long long>(retained.value()));
  return 0;
}
