// The debug endpoints' profile source for a live service: windows through the
// controller on the pool's replicas, source-mapped off the isolate's thread.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "heapprof/pprof_endpoints.h"
#include "heapprof/source_map_locator.h"
#include "heapprof/v8/controller.h"
#include "heapprof/v8/session.h"
#include "heapprof/v8/worker_pool.h"

namespace heapprof {

class PoolProfileSource final : public ProfileSource {
 public:
  // `session` configures every window (interval, depth, GC before snapshot);
  // `source_maps` says where maps may be read (nullopt: profiles stay unmapped).
  PoolProfileSource(Controller& controller, WorkerPool& pool, SessionOptions session,
                    std::optional<SourceMapSearch> source_maps);
  ~PoolProfileSource() override;

  std::vector<TargetStatus> Targets() override;
  Result<Profile> Window(const std::string& target, std::chrono::nanoseconds duration) override;
  Result<Profile> SinceContinuousStart(const std::string& target) override;
  std::vector<CaptureFile> Captures() override;

 private:
  Result<Profile> Finish(Result<WindowProfile> window);

  Controller& controller_;
  WorkerPool& pool_;
  SessionOptions session_;
  std::optional<SourceMapSearch> source_maps_;
};

}  // namespace heapprof
