// The labels are put together and checked once, at Start; each window only
// adds its target's label, is split to the store's limits, gzipped and queued.
#include "heapprof/remote/window_pusher.h"

#include <fmt/format.h>

#include <ctime>

#include "heapprof/core/profile_split.h"
#include "heapprof/core/version.h"

namespace heapprof::remote {
namespace {

std::string UtcClock(int64_t time_nanos) {
  std::time_t start = static_cast<std::time_t>(time_nanos / 1'000'000'000);
  std::tm tm{};
  gmtime_r(&start, &tm);
  char when[32];
  std::strftime(when, sizeof when, "%H:%M:%S", &tm);
  return when;
}

void Log(const PushOptions& options, const std::string& line) {
  if (options.log) options.log(line);
}

}  // namespace

Result<std::unique_ptr<WindowPusher>> WindowPusher::Start(PushOptions options, PushIdentity identity) {
  std::unique_ptr<WindowPusher> w(new WindowPusher());
  w->target_label_ = identity.target_label.empty() ? "replica" : identity.target_label;
  std::vector<PushLabel>& labels = w->labels_;
  labels = {{"__name__", "memory"},
            {"service_name", identity.service_name.empty() ? "unknown_service" : identity.service_name},
            {"__delta__", "false"},
            {"runtime", identity.runtime.empty() ? "embedded" : identity.runtime},
            {"heapprof_version", std::string(kVersion)}};
  if (!identity.version.empty()) labels.push_back({"version", identity.version});
  for (const PushLabel& extra : identity.extra) {
    if (extra.name == "__name__" || extra.name == "__delta__") {
      return Error(ErrorCode::kInvalidArgument,
                   fmt::format("push label {}={}: {} is set by heapprof (memory profiles, not cumulative)", extra.name,
                               extra.value, extra.name));
    }
    if (extra.name == w->target_label_) {
      return Error(ErrorCode::kInvalidArgument, fmt::format("push label {}={}: {} is each window's own target name",
                                                            extra.name, extra.value, extra.name));
    }
    bool replaced = false;
    for (PushLabel& l : labels) {
      if (l.name == extra.name) {
        l.value = extra.value;
        replaced = true;
      }
    }
    if (!replaced) labels.push_back(extra);
  }
  // The labels as the store will see them (with a target), checked now.
  std::vector<PushLabel> probe = labels;
  probe.push_back({w->target_label_, "x"});
  HEAPPROF_RETURN_IF_ERROR(CheckPushLabels(probe));
  w->options_ = options;
  w->options_.bearer_token.clear();  // kept by the pusher only
  HEAPPROF_ASSIGN_OR_RETURN(w->pusher_, Pusher::Start(std::move(options)));
  return w;
}

void WindowPusher::Window(const std::string& target, const Profile& profile) {
  std::vector<PushLabel> labels = labels_;
  labels.push_back({target_label_, target});
  const std::string when = UtcClock(profile.time_nanos);
  Result<PushProfile> prepared =
      PreparePush(profile, std::move(labels), SplitLimits{}, fmt::format("{}'s window of {} UTC", target, when));
  if (!prepared.ok()) {
    ++failed_;
    Log(options_, fmt::format("{}'s window of {} UTC not pushed: {}", target, when, prepared.status().message()));
    return;
  }
  if (prepared->parts.size() > 1) ++split_;
  pusher_->Enqueue(std::move(prepared).value());
}

void WindowPusher::Failed(const std::string& target, const Status& error) {
  ++failed_;
  Log(options_, fmt::format("{}'s window failed, nothing to push: {}", target, error.message()));
}

void WindowPusher::Stop(std::chrono::milliseconds drain) { pusher_->Stop(drain); }

WindowPushStats WindowPusher::Stats() const {
  WindowPushStats s;
  s.push = pusher_->Stats();
  s.queued_bytes = s.push.queued_bytes;
  s.failed = failed_.load();
  s.split = split_.load();
  return s;
}

std::string WindowPusher::Summary() const {
  WindowPushStats w = Stats();
  const PushStats& s = w.push;
  std::string out = fmt::format("pushed {} window{} ({} profile{}, {} bytes) to {} in {} request{}", s.pushed,
                                s.pushed == 1 ? "" : "s", s.parts, s.parts == 1 ? "" : "s", s.bytes,
                                pusher_->Describe(), s.requests, s.requests == 1 ? "" : "s");
  if (w.split > 0) out += fmt::format("; {} split to stay within the store's limits", w.split);
  if (s.retries > 0) out += fmt::format("; {} failed request{} retried", s.retries, s.retries == 1 ? "" : "s");
  if (s.dropped > 0) out += fmt::format("; {} dropped (queue full)", s.dropped);
  if (s.rejected > 0) out += fmt::format("; {} refused by the store", s.rejected);
  if (s.unsent > 0) out += fmt::format("; {} still queued at exit, not pushed", s.unsent);
  if (s.queued > 0) out += fmt::format("; {} queued ({} bytes)", s.queued, w.queued_bytes);
  if (w.failed > 0) out += fmt::format("; {} could not be prepared", w.failed);
  if (!s.last_error.empty()) out += "; last error: " + s.last_error;
  return out;
}

std::vector<std::pair<std::string, std::string>> WindowPusher::CounterRows() const {
  WindowPushStats w = Stats();
  const PushStats& s = w.push;
  auto n = [](uint64_t v) { return std::to_string(v); };
  return {{"store", pusher_->Describe()},
          {"windows sent", n(s.pushed)},
          {"profiles sent", n(s.parts)},
          {"bytes sent", n(s.bytes)},
          {"requests", n(s.requests)},
          {"retried requests", n(s.retries)},
          {"windows refused by the store", n(s.rejected)},
          {"windows dropped (queue full)", n(s.dropped)},
          {"windows failed before the push", n(w.failed)},
          {"windows unsent at stop", n(s.unsent)},
          {"windows queued", n(s.queued)},
          {"queued bytes", n(w.queued_bytes)},
          {"last error", s.last_error.empty() ? "none" : s.last_error}};
}

bool WindowPusher::AllPushed() const {
  WindowPushStats w = Stats();
  return w.push.dropped == 0 && w.push.rejected == 0 && w.push.unsent == 0 && w.failed == 0;
}

}  // namespace heapprof::remote
