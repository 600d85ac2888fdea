// Profiles a snippet with an installed heapprof and prints what it allocated.
#include <v8.h>

#include <cstdio>
#include <utility>

#include "heapprof/core/query.h"
#include "heapprof/v8/session.h"
#include "heapprof/v8/v8_host.h"

int main() {
  auto isolate = heapprof::Isolate::Create();
  if (!isolate.ok()) return std::fprintf(stderr, "%s\n", isolate.status().message().c_str()), 1;
  v8::Isolate::Scope isolate_scope(isolate->get());
  v8::HandleScope handle_scope(isolate->get());
  auto loaded =
      isolate->RunScript("function fill(n) { const a = []; for (let i = 0; i < n; ++i) a.push({i}); return a; }");
  if (!loaded.ok()) return std::fprintf(stderr, "%s\n", loaded.status().message().c_str()), 1;

  heapprof::SessionOptions options;
  options.interval_bytes = 8 * 1024;
  auto session = heapprof::Session::Start(isolate->get(), options);
  if (!session.ok()) return std::fprintf(stderr, "%s\n", session.status().message().c_str()), 1;
  auto ran = isolate->RunScript("globalThis.kept = fill(100000); kept.length");
  auto profile = std::move(session.value()).StopAndBuild();
  if (!ran.ok() || !profile.ok()) return std::fprintf(stderr, "window failed\n"), 1;

  auto total = heapprof::TotalOf(profile.value(), "alloc_space");
  auto fill = heapprof::TotalForFrames(
      profile.value(), heapprof::FrameFilter{"^fill$", "", heapprof::PatternSyntax::kRegex}, heapprof::kAllocSpace);
  if (!total.ok() || !fill.ok()) return std::fprintf(stderr, "query failed\n"), 1;
  std::printf("alloc_space total: %lld bytes, fill: %lld bytes\n", static_cast<long long>(total.value()),
              static_cast<long long>(fill->cum));
  return total.value() > 0 && fill->cum > 0 ? 0 : 1;
}
