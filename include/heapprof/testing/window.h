// Test-harness helpers: run C++ or a JS snippet inside a profiling window on
// an isolate and get the Profile back. Only v8::Isolate is forward-declared,
// so this header compiles without V8's headers.
#pragma once

#include <functional>
#include <string_view>

#include "heapprof/core/profile.h"
#include "heapprof/core/status.h"
#include "heapprof/v8/session.h"
#include "heapprof/v8/v8_host.h"

namespace heapprof::testing {

// Starts V8 (once per process) with inlining off, so an allocation is charged
// to the function that made it, not to a caller it was inlined into. Call it
// before the first Isolate::Create; later calls return the first status.
Status InitializeV8ForTests();

// Session options suited to tests: sample every 16 KiB (fine enough for
// small workloads, cheap enough for a suite) and a full GC before the
// in-use snapshot so garbage never counts as retained.
SessionOptions DefaultWindowOptions();

// Opens a window on `isolate`, calls `body` with the isolate entered and a
// handle scope open (so it may use the V8 API or isolate.RunScript), closes
// the window and builds the profile. Fails when the window cannot open.
Result<Profile> ProfileWindow(Isolate& isolate, const std::function<void()>& body,
                              const SessionOptions& options = DefaultWindowOptions());

// Runs `source` as a classic script inside a window. A script that throws
// fails with kScriptError (the profile of a half-run script is rarely wanted).
Result<Profile> ProfileScript(Isolate& isolate, std::string_view source, std::string_view resource_name = "<test>",
                              const SessionOptions& options = DefaultWindowOptions());

}  // namespace heapprof::testing
