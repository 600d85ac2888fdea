// `heapprof serve --leaks`: one leak session (heapprof/v8/leak_session.h) per
// replica, on its always-on sampler, its snapshots taken on the replica's
// thread between requests (WorkerPoolOptions::between_requests) so they never
// race one. A replica whose isolate is recreated (heap limit, a runaway
// request) starts a new session: the old sampler's ids are gone with it.
// The debug listener reads the reports while the sessions go on.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "heapprof/core/leaks.h"
#include "heapprof/core/source_map_locator.h"
#include "heapprof/core/status.h"
#include "heapprof/runtime/worker_runtime.h"
#include "heapprof/v8/controller.h"
#include "heapprof/v8/leak_session.h"

namespace heapprof {

// One replica's report at the end of the service.
struct FinalLeakReport {
  std::string target;
  Result<LeakReport> report = Error(ErrorCode::kInternal, "no report");  // source-mapped
  std::string json;                                                      // when the report is there
  LeakSessionStats stats;
  uint64_t restarts = 0;  // sessions that ended with their isolate before this one
};

class PoolLeakSessions {
 public:
  // `targets`: the replicas' names (fixed for the service's life).
  // `source_maps`: where the worker's maps may be read (nullopt: sites stay unmapped).
  PoolLeakSessions(Controller& controller, std::vector<std::string> targets, LeakSessionOptions options,
                   std::optional<SourceMapSearch> source_maps);

  // On the replica's thread between requests, the isolate idle: opens the
  // replica's session on its first call for this isolate (`generation`
  // counts the replica's isolates), then takes a snapshot when one is due.
  void Tick(const std::string& target, WorkerRuntime& runtime, uint64_t requests, uint64_t generation);

  bool Has(const std::string& target) const;
  // Any thread: the target's report as JSON, source-mapped, a look of its
  // session; kNotFound for no such target, kUnavailable before its second
  // snapshot (or while a recreated isolate's new session has fewer).
  Result<std::string> ReportJson(const std::string& target);
  // At shutdown: every replica's report (each a look), in the targets' order.
  std::vector<FinalLeakReport> FinalReports();

 private:
  struct Entry {
    mutable std::mutex mu;
    std::shared_ptr<LeakSession> session;
    uint64_t generation = 0;
    uint64_t restarts = 0;
    std::string last_failure;  // a snapshot failed: said once, in the report
  };
  Result<LeakReport> MappedReport(const LeakSession& session) const;

  Controller& controller_;
  std::vector<std::string> targets_;
  LeakSessionOptions options_;
  std::optional<SourceMapSearch> source_maps_;
  std::map<std::string, std::unique_ptr<Entry>> entries_;  // filled at construction, then fixed
};

}  // namespace heapprof
