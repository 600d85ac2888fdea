// Profiling windows for tests: the isolate is entered and a handle scope is
// open for the whole window, as Session::Start and the body both require.
#include "heapprof/testing/window.h"

#include <v8.h>

#include <utility>

#include "heapprof/v8/attribution.h"

namespace heapprof::testing {

Status InitializeV8ForTests() {
  V8InitOptions options;
  options.flags = NoInliningFlags();
  return InitializeV8(options);
}

SessionOptions DefaultWindowOptions() {
  SessionOptions options;
  options.interval_bytes = 16 * 1024;
  options.gc_before_snapshot = true;
  options.isolate_name = "heapprof-test";
  return options;
}

Result<Profile> ProfileWindow(Isolate& isolate, const std::function<void()>& body, const SessionOptions& options) {
  if (isolate.get() == nullptr) return Error(ErrorCode::kFailedPrecondition, "the isolate has been moved from");
  v8::Isolate::Scope isolate_scope(isolate.get());
  v8::HandleScope handle_scope(isolate.get());
  HEAPPROF_ASSIGN_OR_RETURN(auto session, Session::Start(isolate.get(), options));
  body();
  return std::move(session).StopAndBuild();
}

Result<Profile> ProfileScript(Isolate& isolate, std::string_view source, std::string_view resource_name,
                              const SessionOptions& options) {
  Status script_status;
  auto profile = ProfileWindow(
      isolate,
      [&] {
        auto r = isolate.RunScript(source, resource_name);
        if (!r.ok()) script_status = r.status();
      },
      options);
  if (!script_status.ok()) return script_status;
  return profile;
}

}  // namespace heapprof::testing
