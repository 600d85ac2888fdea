// The profiling window: lifecycle, one window per isolate, metadata.
#include "heapprof/v8/session.h"

#include <v8-profiler.h>
#include <v8.h>

#include <chrono>
#include <map>
#include <mutex>
#include <string>

#include "heapprof/core/profile_builder.h"
#include "heapprof/v8/gc.h"
#include "heapprof/v8/isolate_claims.h"
#include "heapprof/v8/strategy.h"

namespace heapprof {
namespace {

// Isolates held by a Session or a Sampler: V8 has one sampler per isolate.
std::mutex g_active_mutex;
std::map<v8::Isolate*, internal::IsolateHolder> g_active;

}  // namespace

namespace internal {

bool ClaimIsolate(v8::Isolate* isolate, IsolateHolder holder, std::string* why) {
  std::lock_guard<std::mutex> lock(g_active_mutex);
  auto [it, inserted] = g_active.emplace(isolate, holder);
  if (inserted) return true;
  if (why != nullptr) {
    *why = it->second == IsolateHolder::kSession
               ? "a profiling window is already open on this isolate"
               : "a profiling window is already open on this isolate: heapprof's always-on sampler holds it "
                 "(a controller target; ask the controller for windows)";
  }
  return false;
}

Status ClaimForSampling(v8::Isolate* isolate, IsolateHolder holder, uint64_t interval_bytes, int max_stack_depth,
                        uint64_t max_samples) {
  if (isolate == nullptr) return Error(ErrorCode::kInvalidArgument, "no isolate given");
  if (interval_bytes == 0 || interval_bytes > (1ull << 31)) {
    return Error(ErrorCode::kInvalidArgument, "sampling interval must be between 1 byte and 2 GiB");
  }
  if (max_stack_depth < 1 || max_stack_depth > 1024) {
    return Error(ErrorCode::kInvalidArgument, "stack depth must be between 1 and 1024");
  }
  if (max_samples == 0) return Error(ErrorCode::kInvalidArgument, "sample cap must be positive");
  if (std::string why; !ClaimIsolate(isolate, holder, &why)) return Error(ErrorCode::kFailedPrecondition, why);
  return Status::Ok();
}

void ReleaseIsolate(v8::Isolate* isolate) {
  std::lock_guard<std::mutex> lock(g_active_mutex);
  g_active.erase(isolate);
}

}  // namespace internal

const char* CompiledStrategy() { return internal::kNativeLiveness ? "native-liveness" : "gc-prologue-ledger"; }

class Session::Impl {
 public:
  v8::Isolate* isolate = nullptr;
  SessionOptions options;
  std::unique_ptr<internal::Strategy> strategy;
  int64_t start_unix_nanos = 0;
  std::chrono::steady_clock::time_point start;
  bool active = false;

  // Stops the sampler and releases the isolate's slot; idempotent.
  void Close() {
    if (!active) return;
    strategy->Detach(isolate);
    isolate->GetHeapProfiler()->StopSamplingHeapProfiler();
    active = false;
    internal::ReleaseIsolate(isolate);
  }
};

Session::Session(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Session::Session(Session&&) noexcept = default;
Session& Session::operator=(Session&& other) noexcept {
  if (this != &other) {
    if (impl_) impl_->Close();
    impl_ = std::move(other.impl_);
  }
  return *this;
}
Session::~Session() {
  if (impl_) impl_->Close();
}

bool Session::active() const { return impl_ && impl_->active; }
uint64_t Session::prologue_snapshots() const { return impl_ ? impl_->strategy->prologue_snapshots() : 0; }

Result<Session> Session::Start(v8::Isolate* isolate, const SessionOptions& options) {
  HEAPPROF_RETURN_IF_ERROR(internal::ClaimForSampling(isolate, internal::IsolateHolder::kSession,
                                                      options.interval_bytes, options.max_stack_depth,
                                                      options.max_samples));
  auto impl = std::make_unique<Impl>();
  impl->isolate = isolate;
  impl->options = options;
  impl->strategy =
      internal::kNativeLiveness ? internal::MakeNativeLivenessStrategy(options) : internal::MakeLedgerStrategy(options);
  v8::HandleScope scope(isolate);
  bool started = isolate->GetHeapProfiler()->StartSamplingHeapProfiler(options.interval_bytes, options.max_stack_depth,
                                                                       impl->strategy->sampling_flags());
  if (!started) {
    internal::ReleaseIsolate(isolate);
    return Error(ErrorCode::kUnavailable,
                 "V8's sampling heap profiler is already running on this isolate "
                 "(another tool, such as the inspector, holds it)");
  }
  impl->strategy->OnStarted(isolate);
  impl->start_unix_nanos = UnixNanosNow();
  impl->start = std::chrono::steady_clock::now();
  impl->active = true;
  return Session(std::move(impl));
}

Result<RawSnapshot> Session::Stop() && {
  if (!impl_ || !impl_->active) {
    return Error(ErrorCode::kFailedPrecondition, "the profiling window is not open");
  }
  Impl& s = *impl_;
  RawSnapshot out;
  // Inside a GC callback (e.g. near the heap limit) no GC can precede the snapshot.
  bool gc_ran = s.options.gc_before_snapshot && !internal::InsideGcCallback();
  Status status = s.strategy->Finish(s.isolate, out);
  auto duration = std::chrono::steady_clock::now() - s.start;
  s.Close();
  if (!status.ok()) return status;

  WindowInfo& info = out.info;
  info.start_unix_nanos = s.start_unix_nanos;
  info.duration_nanos = std::chrono::duration_cast<std::chrono::nanoseconds>(duration).count();
  info.interval_bytes = s.options.interval_bytes;
  info.max_stack_depth = s.options.max_stack_depth;
  info.v8_version = v8::V8::GetVersion();
  info.isolate_name = s.options.isolate_name;
  info.strategy = s.strategy->name();
  info.gc_before_snapshot = gc_ran;
  info.inlining_allowed = s.options.inlining_allowed;
  impl_.reset();
  return out;
}

Result<Profile> Session::StopAndBuild() && {
  HEAPPROF_ASSIGN_OR_RETURN(RawSnapshot raw, std::move(*this).Stop());
  return BuildProfile(raw);
}

}  // namespace heapprof
