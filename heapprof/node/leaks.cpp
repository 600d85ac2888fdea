// The Node.js addon's leak session: the always-on sampler (heapprof/v8/sampler.h)
// on the calling thread's isolate, live snapshots into the V8-free tracker
// (heapprof/core/leaks.h), and its growth report and profile, as `heapprof
// run --leaks` gives them. index.js takes the snapshots at a cadence.
#include <node.h>
#include <node_buffer.h>
#include <v8.h>

#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "heapprof/core/leaks.h"
#include "heapprof/core/pprof.h"
#include "heapprof/node/addon_state.h"
#include "heapprof/v8/sampler.h"

namespace heapprof::node_addon {
namespace {

using Clock = std::chrono::steady_clock;

v8::Local<v8::String> Text(v8::Isolate* isolate, const std::string& text) {
  return v8::String::NewFromUtf8(isolate, text.data(), v8::NewStringType::kNormal, static_cast<int>(text.size()))
      .ToLocalChecked();
}

// True when a leak session runs; else throws.
bool Running(v8::Isolate* isolate, const AddonState& state) {
  if (state.leak_sampler) return true;
  Throw(isolate, "no leak session is running; call leaks.start() first");
  return false;
}

// leaksStart(interval, depth, gcBeforeSnapshot, gc)
void LeaksStart(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  AddonState& state = StateOf(isolate);
  if (state.leak_sampler) {
    Throw(isolate, "a leak session is already running; call leaks.stop() first");
    return;
  }
  if (state.session && state.session->active()) {
    Throw(isolate, "a profile window is running; a leak session needs V8's sampler for itself: call stop() first");
    return;
  }
  SamplerOptions options;
  StartArgs args{options.interval_bytes, options.max_stack_depth, /*full_gc=*/true};
  if (!ReadStartArgs(info, state, args)) return;
  options.interval_bytes = args.interval;
  options.max_stack_depth = args.depth;
  const bool full_gc = args.full_gc;
  if (args.gc_function) options.full_gc = [&state] { RunFullGc(state); };
  Result<std::unique_ptr<Sampler>> sampler = Sampler::Start(isolate, options);
  if (!sampler.ok()) {
    const Status& s = sampler.status();
    Throw(isolate, s.code() == ErrorCode::kUnavailable ? "the sampler is busy: " + s.message() : s.message());
    return;
  }
  state.leak_sampler = std::move(sampler).value();
  state.leak_tracker = std::make_unique<LeakTracker>();
  state.leak_last = RawSnapshot{};
  state.leak_full_gc = full_gc;
  state.leak_looks = 0;
  state.leak_snapshot_nanos_max = state.leak_snapshot_nanos_total = 0;
}

// leaksSnapshot() -> the snapshot's cost in milliseconds (its pause of the isolate).
void LeaksSnapshot(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  AddonState& state = StateOf(isolate);
  if (!Running(isolate, state)) return;
  const Clock::time_point begun = Clock::now();
  Result<RawSnapshot> snapshot = state.leak_sampler->LiveSnapshot(state.leak_full_gc);
  if (!snapshot.ok()) {
    Throw(isolate, "the leak session's snapshot failed: " + snapshot.status().message());
    return;
  }
  if (Status added = state.leak_tracker->Add(snapshot.value()); !added.ok()) {
    Throw(isolate, "the leak session's snapshot failed: " + added.message());
    return;
  }
  state.leak_last = std::move(snapshot).value();
  const int64_t cost = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - begun).count();
  state.leak_snapshot_nanos_max = std::max(state.leak_snapshot_nanos_max, cost);
  state.leak_snapshot_nanos_total += cost;
  info.GetReturnValue().Set(static_cast<double>(cost) / 1e6);
}

// leaksReport() -> [JSON text, terminal text] of one look at the session.
void LeaksReport(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  AddonState& state = StateOf(isolate);
  if (!Running(isolate, state)) return;
  const size_t snapshots = state.leak_tracker->snapshots();
  if (snapshots < 2) {
    Throw(isolate, "the leak session has " + std::to_string(snapshots) + " snapshot" + (snapshots == 1 ? "" : "s") +
                       " so far; a growth report needs two (leaks.snapshot(), or a longer run)");
    return;
  }
  LeakReportOptions options;
  options.look = static_cast<int>(++state.leak_looks);
  Result<LeakReport> report = state.leak_tracker->Report(options);
  if (!report.ok()) {
    Throw(isolate, report.status().message());
    return;
  }
  nlohmann::json root = nlohmann::json::parse(LeakReportJson(report.value(), state.leak_tracker.get()));
  root["target"] = "node";
  root["session"] = {{"snapshots", snapshots},
                     {"full_gc", state.leak_full_gc},
                     {"snapshot_ms_max", static_cast<double>(state.leak_snapshot_nanos_max) / 1e6},
                     {"snapshot_ms_total", static_cast<double>(state.leak_snapshot_nanos_total) / 1e6},
                     {"looks", state.leak_looks}};
  v8::Local<v8::Context> context = isolate->GetCurrentContext();
  v8::Local<v8::Array> out = v8::Array::New(isolate, 2);
  out->Set(context, 0, Text(isolate, root.dump())).Check();
  out->Set(context, 1, Text(isolate, FormatLeakReport(report.value()))).Check();
  info.GetReturnValue().Set(out);
}

// leaksProfile() -> Buffer: the last snapshot's in-use samples with their age label, gzipped pprof.
void LeaksProfile(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  AddonState& state = StateOf(isolate);
  if (!Running(isolate, state)) return;
  if (state.leak_tracker->snapshots() == 0) {
    Throw(isolate, "the leak session has no snapshot yet (leaks.snapshot())");
    return;
  }
  Result<std::string> bytes = EncodePprofGzip(BuildLeakProfile(state.leak_last, *state.leak_tracker));
  if (!bytes.ok()) {
    Throw(isolate, bytes.status().message());
    return;
  }
  v8::Local<v8::Object> buffer;
  if (!node::Buffer::Copy(isolate, bytes->data(), bytes->size()).ToLocal(&buffer)) return;
  info.GetReturnValue().Set(buffer);
}

// leaksStop(): V8's sampler stops, the session's samples are dropped.
void LeaksStop(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  AddonState& state = StateOf(isolate);
  if (!Running(isolate, state)) return;
  state.leak_tracker.reset();
  state.leak_sampler.reset();
  state.leak_last = RawSnapshot{};
}

void LeaksRunning(const v8::FunctionCallbackInfo<v8::Value>& info) {
  info.GetReturnValue().Set(StateOf(info.GetIsolate()).leak_sampler != nullptr);
}

}  // namespace

void AddLeakMethods(v8::Local<v8::Context> context, v8::Local<v8::Object> exports) {
  SetMethod(context, exports, "leaksStart", LeaksStart);
  SetMethod(context, exports, "leaksSnapshot", LeaksSnapshot);
  SetMethod(context, exports, "leaksReport", LeaksReport);
  SetMethod(context, exports, "leaksProfile", LeaksProfile);
  SetMethod(context, exports, "leaksStop", LeaksStop);
  SetMethod(context, exports, "leaksRunning", LeaksRunning);
}

}  // namespace heapprof::node_addon
