// Embedding V8: process-wide initialisation and isolates with a heap limit.
// Only v8::Isolate is named here (forward-declared), so this header compiles
// without V8's headers.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "heapprof/core/status.h"

namespace v8 {
class Isolate;
}  // namespace v8

namespace heapprof {
namespace internal {
class IsolateAccess;
}  // namespace internal

struct V8InitOptions {
  // V8 command-line flags applied before V8 starts (e.g. "--no-turbo-inlining").
  std::vector<std::string> flags;
};

// Starts V8 once per process (thread-safe). Later calls return the first
// call's status; their flags are ignored. V8 is never torn down.
Status InitializeV8(const V8InitOptions& options = {});
// The version of the linked V8 (v8::V8::GetVersion()).
std::string V8RuntimeVersion();
// "MAJOR.MINOR" of the V8 headers heapprof was compiled against.
std::string V8HeaderVersion();
// The flags of the first InitializeV8 call that the linked V8 recognised and
// applied, and those it did not know (so callers can say which took effect).
std::vector<std::string> V8AppliedFlags();
std::vector<std::string> V8UnknownFlags();

// Called on the isolate's thread when the heap nears its limit, before
// heapprof terminates the running script (e.g. to capture an in-use profile).
using NearHeapLimitHook = std::function<void(v8::Isolate*, size_t current_limit)>;

// An isolate's heap limit when nobody says (the platform's limit for a Worker).
inline constexpr size_t kDefaultHeapLimitBytes = size_t{128} << 20;

struct IsolateOptions {
  size_t heap_limit_bytes = kDefaultHeapLimitBytes;  // whole V8 heap
  std::string name = "isolate";
  NearHeapLimitHook on_near_heap_limit;  // optional
  // The context's global object answers for names added to its lazy-globals
  // table (internal::LazyGlobalsOf) until their first read.
  bool lazy_globals = false;
};

// An owned isolate with one context. Move-only; disposes the isolate.
// Use it from one thread at a time.
class Isolate {
 public:
  // Creates an isolate; initialises V8 with default options if needed.
  static Result<Isolate> Create(const IsolateOptions& options = {});
  Isolate(Isolate&&) noexcept;
  Isolate& operator=(Isolate&&) noexcept;
  Isolate(const Isolate&) = delete;
  Isolate& operator=(const Isolate&) = delete;
  ~Isolate();

  v8::Isolate* get() const;
  const std::string& name() const;
  size_t heap_limit_bytes() const;

  // Runs a classic script in the isolate's context; returns the completion
  // value as a string, or kScriptError with the message and JS stack, or
  // kResourceExhausted when the heap limit stopped it.
  Result<std::string> RunScript(std::string_view source, std::string_view resource_name = "<script>");
  // Whether the heap limit has been hit (the isolate then refuses to run JS).
  bool heap_limit_reached() const;

  // Internal state (context, callbacks); opaque to users.
  struct State;

 private:
  friend class internal::IsolateAccess;  // heapprof's V8-facing code reaches State through it
  explicit Isolate(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace heapprof
