// Process-wide V8 start-up, exactly once.
#include <libplatform/libplatform.h>
#include <v8.h>

#include <mutex>

#include "heapprof/v8/gc.h"
#include "heapprof/v8/v8_host.h"

namespace heapprof {
namespace {

std::once_flag g_once;
Status g_status;
std::unique_ptr<v8::Platform> g_platform;
std::vector<std::string> g_applied;
std::vector<std::string> g_unknown;

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
        internal::SetFullGcAvailable(argc == 1);
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

std::string V8HeaderVersion() { return std::to_string(V8_MAJOR_VERSION) + "." + std::to_string(V8_MINOR_VERSION); }

std::vector<std::string> V8AppliedFlags() { return g_applied; }
std::vector<std::string> V8UnknownFlags() { return g_unknown; }

}  // namespace heapprof
