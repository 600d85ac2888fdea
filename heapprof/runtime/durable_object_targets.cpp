// Durable Objects as the controller's targets (durable_object_targets.h).
#include "heapprof/runtime/durable_object_targets.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <utility>

#include <fmt/format.h>

namespace heapprof {
namespace {

// How often Pump reads the objects' heap and counts for Targets().
constexpr auto kRefreshEvery = std::chrono::milliseconds(500);

std::string Lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

}  // namespace

Result<DurableObjectSelector> DurableObjectSelector::Parse(std::string_view target) {
  const size_t colon = target.find(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == target.size()) {
    return Error(ErrorCode::kInvalidArgument,
                 fmt::format("{}: name a Durable Object as NS:NAME (NS its binding, NAME its idFromName name or "
                             "its 64-hex id)",
                             target));
  }
  return DurableObjectSelector{std::string(target.substr(0, colon)), std::string(target.substr(colon + 1))};
}

bool DurableObjectSelector::Matches(const DurableObjectReport& object) const {
  if (object.binding != binding) return false;
  return (!object.name.empty() && object.name == name) || object.id == Lower(name);
}

std::string DurableObjectTargetName(const DurableObjectReport& object) {
  return object.binding + ":" + (object.name.empty() ? object.id : object.name);
}

DurableObjectTargets::DurableObjectTargets(Controller& controller) : controller_(controller) {}

DurableObjectTargets::~DurableObjectTargets() = default;

void DurableObjectTargets::Install(WorkerOptions& options) {
  options.on_durable_object_created = [this, before = std::move(options.on_durable_object_created)](
                                          const DurableObjectReport& object, WorkerRuntime& runtime) {
    if (before) before(object, runtime);
    Registered(object, runtime);
  };
  options.on_durable_object_evicted = [this, before = std::move(options.on_durable_object_evicted)](
                                          const DurableObjectReport& object, WorkerRuntime& runtime) {
    if (before) before(object, runtime);
    Evicted(object);
  };
}

void DurableObjectTargets::Registered(const DurableObjectReport& object, WorkerRuntime& runtime) {
  Entry entry;
  entry.target.name = DurableObjectTargetName(object);
  entry.target.report = object;
  entry.target.heap_limit_bytes = runtime.heap_usage().limit_bytes;
  entry.runtime = &runtime;
  // Only a clash of names fails (a replica named like the object): the object
  // serves on, and is no target.
  if (Status s = controller_.Register(entry.target.name, runtime.isolate()); !s.ok()) {
    fmt::print(stderr, "heapprof: Durable Object {} is not a profiling target: {}\n", entry.target.name, s.message());
    std::fflush(stderr);
    return;
  }
  std::lock_guard<std::mutex> lock(mu_);
  entries_.push_back(std::move(entry));
}

void DurableObjectTargets::Evicted(const DurableObjectReport& object) {
  const std::string name = DurableObjectTargetName(object);
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = std::find_if(entries_.begin(), entries_.end(), [&](const Entry& e) { return e.target.name == name; });
    if (it == entries_.end()) return;
    entries_.erase(it);
  }
  (void)controller_.Unregister(name);
}

void DurableObjectTargets::Pump(WorkerRuntime& worker) {
  // Read before the round: a step queued during it changes the count again,
  // so the next round runs too.
  const uint64_t posted = controller_.StepsPosted();
  const auto now = std::chrono::steady_clock::now();
  const bool refresh = now - refreshed_ >= kRefreshEvery;
  if (posted == pumped_ && !refresh) return;  // most calls: nothing waits, nothing to read
  std::vector<WorkerRuntime*> runtimes;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const Entry& e : entries_) runtimes.push_back(e.runtime);
  }
  if (posted != pumped_) {
    for (WorkerRuntime* runtime : runtimes) controller_.Pump(runtime->isolate());
    pumped_ = posted;
  }
  if (runtimes.empty() || !refresh) return;
  refreshed_ = now;
  Result<std::vector<DurableObjectReport>> reports = worker.DurableObjects();
  if (!reports.ok()) return;
  std::lock_guard<std::mutex> lock(mu_);
  for (const DurableObjectReport& r : reports.value()) {
    const std::string name = DurableObjectTargetName(r);
    for (Entry& e : entries_) {
      if (e.target.name == name) e.target.report = r;
    }
  }
}

void DurableObjectTargets::UnregisterAll() {
  std::vector<Entry> entries;
  {
    std::lock_guard<std::mutex> lock(mu_);
    entries.swap(entries_);
  }
  for (const Entry& e : entries) (void)controller_.Unregister(e.target.name);
}

std::vector<DurableObjectTarget> DurableObjectTargets::Targets() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<DurableObjectTarget> out;
  out.reserve(entries_.size());
  for (const Entry& e : entries_) out.push_back(e.target);
  return out;
}

}  // namespace heapprof
