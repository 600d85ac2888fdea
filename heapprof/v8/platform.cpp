// Process-wide V8 start-up, exactly once.
#include <libplatform/libplatform.h>
#include <v8.h>

#include <mutex>

#include "heapprof/v8/gc.h"
#include "heapprof/v8_host.h"

namespace heapprof {
namespace {

std::once_flag g_once;
Status g_status;
std::unique_ptr<v8::Platform> g_platform;
std::vector<std::string> g_applied;
std::vector<std::string> g_unknown;
bool g_full_gc_available = false;

}  // namespace

Status InitializeV8(const V8InitOptions& options) {
  std::call_once(g_once, [&options] {
    // One flag at a time: V8 removes the flags it recognises from argv,
    // which tells known flags from unknown ones across V8 versions.
    // Lets heapprof request one full GC before an in-use snapshot instead of
    // LowMemoryNotification's several; the JS global it adds is removed from
    // every context heapprof creates.
    std::vector<std::string> flags = {std::string("--expose-gc-as=") + internal::kGcGlobalName};
    flags.insert(flags.end(), options.flags.begin(), options.flags.end());
    for (const std::string& flag : flags) {
      std::string program = "heapprof";
      std::string copy = flag;
      char* argv[] = {program.data(), copy.data(), nullptr};
      int argc = 2;
      v8::V8::SetFlagsFromCommandLine(&argc, argv, /*remove_flags=*/true);
      if (&flag == &flags.front()) {
        g_full_gc_available = argc == 1;
        continue;
      }
      (argc == 1 ? g_applied : g_unknown).push_back(flag);
    }
    g_platform = v8::platform::NewDefaultPlatform();
    v8::V8::InitializePlatform(g_platform.get());
    if (!v8::V8::Initialize()) {
      g_status = Error(ErrorCode::kInternal, "V8 failed to initialise");
    }
  });
  return g_status;
}

std::string V8RuntimeVersion() { return v8::V8::GetVersion(); }

std::string V8HeaderVersion() {
  return std::to_string(V8_MAJOR_VERSION) + "." + std::to_string(V8_MINOR_VERSION);
}

namespace internal {

namespace {
thread_local bool t_inside_gc_callback = false;
}  // namespace

bool InsideGcCallback() { return t_inside_gc_callback; }
GcCallbackScope::GcCallbackScope() : previous_(t_inside_gc_callback) { t_inside_gc_callback = true; }
GcCallbackScope::~GcCallbackScope() { t_inside_gc_callback = previous_; }

void CollectGarbageForSnapshot(v8::Isolate* isolate) {
  if (InsideGcCallback()) return;  // a GC is already running on this thread
  if (g_full_gc_available) {
    isolate->RequestGarbageCollectionForTesting(v8::Isolate::kFullGarbageCollection);
  } else {
    // V8 was started by someone else: the public API's only full GC.
    isolate->LowMemoryNotification();
  }
}

void HideGcGlobal(v8::Isolate* isolate, v8::Local<v8::Context> context) {
  v8::Local<v8::String> name =
      v8::String::NewFromUtf8Literal(isolate, kGcGlobalName, v8::NewStringType::kInternalized);
  // The extension declares it like a `var` (not deletable): overwrite it.
  if (!context->Global()->Delete(context, name).FromMaybe(false)) {
    context->Global()->Set(context, name, v8::Undefined(isolate)).FromMaybe(false);
  }
}

}  // namespace internal

std::vector<std::string> V8AppliedFlags() { return g_applied; }
std::vector<std::string> V8UnknownFlags() { return g_unknown; }

}  // namespace heapprof
