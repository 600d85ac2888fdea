// How the worker runtime runs its JavaScript to a settled state (microtasks,
// then virtual-time timers) and says why a call failed: the heap limit, the
// time limit, a termination or the exception. See worker_state.h.
#include <string>

#include "heapprof/runtime/worker_state.h"
#include "heapprof/v8/isolate_state.h"
#include "heapprof/v8/v8_util.h"

namespace heapprof {
namespace {

// Timers a single request may fire before heapprof calls it a runaway loop.
constexpr int kMaxTimersPerWait = 1'000'000;

}  // namespace

namespace internal {

std::string Said(const std::string& what, std::string why) { return what.empty() ? why : what + ": " + why; }

std::string FormatLimit(std::chrono::milliseconds limit) {
  if (limit.count() % 1000 == 0) return std::to_string(limit.count() / 1000) + " s";
  return std::to_string(limit.count()) + " ms";
}

std::string DescribeValue(v8::Isolate* isolate, v8::Local<v8::Context> context, v8::Local<v8::Value> value) {
  if (value->IsObject()) {
    v8::TryCatch try_catch(isolate);
    v8::Local<v8::Value> stack;
    if (value.As<v8::Object>()->Get(context, NewString(isolate, "stack")).ToLocal(&stack) && stack->IsString()) {
      std::string text = ToStdString(isolate, stack.As<v8::String>());
      if (!text.empty()) return text;
    }
  }
  return ValueToString(isolate, context, value, "<unprintable value>");
}

ScriptError ScriptFailure(WorkerRuntime::State* state, const v8::TryCatch& try_catch, const std::string& what) {
  v8::Isolate* isolate = state->v8();
  if (state->isolate.heap_limit_reached()) {
    isolate->CancelTerminateExecution();
    const char* who = state->serving != nullptr ? "the object's isolate" : "the worker";
    return {WorkerFailure::kHeapLimit,
            Error(ErrorCode::kResourceExhausted,
                  Said(what, std::string(who) + " exceeded its heap limit of " +
                                 std::to_string(state->isolate.heap_limit_bytes() / (1024 * 1024)) + " MiB" +
                                 IsolateAccess::Of(state->isolate)->LimitDetail()))};
  }
  if (state->watchdog->fired()) {
    return {WorkerFailure::kTimedOut,
            Error(ErrorCode::kDeadlineExceeded,
                  Said(what, "ran longer than the time limit of " + FormatLimit(state->watchdog->limit()) +
                                 " and was terminated"))};
  }
  if (try_catch.HasTerminated()) {
    isolate->CancelTerminateExecution();
    return {WorkerFailure::kTerminated, Error(ErrorCode::kScriptError, Said(what, "execution was terminated"))};
  }
  return {
      WorkerFailure::kThrew,
      Error(ErrorCode::kScriptError, Said(what, DescribeException(isolate, isolate->GetCurrentContext(), try_catch)))};
}

ScriptError RunUntil(WorkerRuntime::State* state, const std::function<bool()>& done, const char* what) {
  v8::Isolate* isolate = state->v8();
  v8::Local<v8::Context> context = state->Context();
  v8::Local<v8::Value> run_next = state->Internal("runNextTimer");
  for (int fired = 0;; ++fired) {
    v8::TryCatch try_catch(isolate);
    isolate->PerformMicrotaskCheckpoint();
    if (try_catch.HasCaught() || try_catch.HasTerminated() || state->isolate.heap_limit_reached()) {
      return ScriptFailure(state, try_catch, what);
    }
    if (done()) return {};
    if (fired >= kMaxTimersPerWait) {
      return {WorkerFailure::kStalled,
              Error(ErrorCode::kScriptError,
                    Said(what, "gave up after " + std::to_string(kMaxTimersPerWait) + " timers without settling"))};
    }
    v8::Local<v8::Value> more;
    if (!run_next.As<v8::Function>()->Call(context, v8::Undefined(isolate), 0, nullptr).ToLocal(&more)) {
      return ScriptFailure(state, try_catch, what);
    }
    if (!more->IsTrue()) {
      return {WorkerFailure::kStalled,
              Error(ErrorCode::kScriptError, Said(what,
                                                  "a promise never settled (heapprof's runtime has no network or I/O; "
                                                  "only microtasks and setTimeout can make progress)"))};
    }
  }
}

}  // namespace internal

}  // namespace heapprof
