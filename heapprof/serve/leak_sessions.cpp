// PoolLeakSessions: a LeakSession per replica isolate, the reports source-mapped.
#include "heapprof/serve/leak_sessions.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <utility>

#include "heapprof/runtime/runtime_source_maps.h"

namespace heapprof {

PoolLeakSessions::PoolLeakSessions(Controller& controller, std::vector<std::string> targets, LeakSessionOptions options,
                                   std::optional<SourceMapSearch> source_maps)
    : controller_(controller),
      targets_(std::move(targets)),
      options_(std::move(options)),
      source_maps_(std::move(source_maps)) {
  for (const std::string& t : targets_) entries_.emplace(t, std::make_unique<Entry>());
}

void PoolLeakSessions::Tick(const std::string& target, WorkerRuntime& runtime, uint64_t requests, uint64_t generation) {
  auto it = entries_.find(target);
  if (it == entries_.end()) return;
  Entry& e = *it->second;
  std::shared_ptr<LeakSession> session;
  {
    std::lock_guard<std::mutex> lock(e.mu);
    if (!e.session || e.generation != generation) {
      if (e.session) ++e.restarts;  // the old isolate and its sampler are gone
      LeakSessionOptions o = options_;
      o.sampling.isolate_name = target;
      e.session = std::make_shared<LeakSession>(controller_, target, runtime.isolate().get(), o);
      e.generation = generation;
    }
    session = e.session;
  }
  Result<bool> taken = session->Tick(requests);
  if (!taken.ok()) {
    std::lock_guard<std::mutex> lock(e.mu);
    if (e.last_failure.empty()) {
      e.last_failure = taken.status().message();
      fmt::print(stderr, "heapprof serve: {}: the leak session's snapshot failed: {}\n", target, e.last_failure);
    }
  }
}

bool PoolLeakSessions::Has(const std::string& target) const { return entries_.count(target) > 0; }

Result<LeakReport> PoolLeakSessions::MappedReport(const LeakSession& session) const {
  Result<LeakReport> report = session.Report();
  if (!report.ok() || !source_maps_) return report;
  FileSourceMapProvider files(*source_maps_);
  RuntimeSourceMapProvider maps(&files);
  (void)SymbolizeLeakReport(report.value(), maps);
  return report;
}

Result<std::string> PoolLeakSessions::ReportJson(const std::string& target) {
  auto it = entries_.find(target);
  if (it == entries_.end()) return Error(ErrorCode::kNotFound, "no leak session on " + target);
  Entry& e = *it->second;
  std::shared_ptr<LeakSession> session;
  uint64_t restarts = 0;
  {
    std::lock_guard<std::mutex> lock(e.mu);
    session = e.session;
    restarts = e.restarts;
  }
  if (!session) {
    return Error(ErrorCode::kUnavailable,
                 fmt::format("the leak session on {} has not taken its first snapshot yet", target));
  }
  Result<LeakReport> report = MappedReport(*session);
  if (!report.ok()) {
    const Status& s = report.status();
    return Error(s.code() == ErrorCode::kFailedPrecondition ? ErrorCode::kUnavailable : s.code(),
                 s.message() + (restarts > 0 ? fmt::format(" (its isolate was recreated {} time{}; each new isolate "
                                                           "starts a new session)",
                                                           restarts, restarts == 1 ? "" : "s")
                                             : std::string()));
  }
  nlohmann::json root = nlohmann::json::parse(session->ReportJson(report.value()));
  root["session"]["restarts"] = restarts;
  return root.dump();
}

std::vector<FinalLeakReport> PoolLeakSessions::FinalReports() {
  std::vector<FinalLeakReport> out;
  for (const std::string& target : targets_) {
    Entry& e = *entries_.at(target);
    FinalLeakReport f;
    f.target = target;
    std::shared_ptr<LeakSession> session;
    {
      std::lock_guard<std::mutex> lock(e.mu);
      session = e.session;
      f.restarts = e.restarts;
    }
    if (!session) {
      f.report = Error(ErrorCode::kUnavailable, "the leak session took no snapshot");
      out.push_back(std::move(f));
      continue;
    }
    f.stats = session->stats();
    f.report = MappedReport(*session);
    if (f.report.ok()) f.json = session->ReportJson(f.report.value());
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace heapprof
