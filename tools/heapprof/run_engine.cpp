// `heapprof run`'s engine: replicas on threads (run_replica.h), windows through the controller.
#include "tools/heapprof/run_engine.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "heapprof/core/file_io.h"
#include "heapprof/core/pprof.h"
#include "heapprof/core/report.h"
#include "heapprof/core/symbolizer.h"
#include "heapprof/core/text.h"
#include "heapprof/core/units.h"
#include "heapprof/runtime/runtime_source_maps.h"
#include "heapprof/workload/traffic.h"
#include "tools/heapprof/interrupt.h"
#include "tools/heapprof/progress.h"
#include "tools/heapprof/run_replica.h"

namespace heapprof::cli {

Result<EngineOutcome> RunEngine(const Plan& plan) {
  Run run(plan);
  std::vector<std::unique_ptr<Replica>> replicas;
  for (const std::string& name : plan.replicas) {
    auto r = std::make_unique<Replica>();
    r->name = name;
    r->profiled = std::find(plan.profiled.begin(), plan.profiled.end(), name) != plan.profiled.end();
    r->thread = std::make_unique<ReplicaThread>(run, *r);
    r->replica.emplace(r->thread->MakeOptions());
    replicas.push_back(std::move(r));
  }

  // Ctrl-C / SIGTERM: the windows end at once, the JS running now is
  // terminated, and what the windows hold is written. (A second signal ends
  // heapprof at once.)
  InterruptWatcher interrupts([&] {
    run.controller.EndWindows();
    for (auto& r : replicas) (void)r->replica->Terminate();
    run.cv.notify_all();
  });
  for (auto& r : replicas) {
    r->replica->Start([thread = r->thread.get()](Status loaded) { thread->Main(std::move(loaded)); });
  }

  // Wait until every profiled replica is done (then the others stop too),
  // drawing the progress line on a terminal.
  const int profiled = static_cast<int>(plan.profiled.size());
  const int total = static_cast<int>(replicas.size());
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(run.mu);
      run.cv.wait_for(lock, std::chrono::milliseconds(100),
                      [&] { return run.profiled_done == profiled || run.all_done == total; });
      if (run.profiled_done == profiled || run.all_done == total) break;
    }
    if (!run.progress.enabled()) continue;
    uint64_t served = 0;
    int open = 0;
    for (auto& r : replicas) {
      served += r->served.load();
      open += r->window_open.load() ? 1 : 0;
    }
    std::string state =
        open > 0 ? (total == 1 ? "window open" : fmt::format("{} windows open", open)) : std::string("warming up");
    std::lock_guard<std::mutex> lock(run.progress_mu);
    run.progress.Show(
        fmt::format("heapprof: {} requests  {:.1f}s  {}  heap {} / {}", served, Since(run.start) / 1e9, state,
                    FormatValue(static_cast<int64_t>(replicas[0]->replica->heap().used_bytes), "bytes"),
                    FormatValue(static_cast<int64_t>(replicas[0]->replica->heap().limit_bytes), "bytes")));
  }
  run.over = true;
  EngineOutcome outcome;
  for (auto& r : replicas) {
    r->replica->Join();
    if (r->continuous_id != 0) run.controller.StopContinuous(r->continuous_id);  // its last window is delivered
    if (r->window.valid()) r->out.window.emplace(r->window.get());
  }
  interrupts.StopWatching();
  {
    std::lock_guard<std::mutex> lock(run.progress_mu);
    run.progress.Clear();
  }
  outcome.elapsed_ns = Since(run.start);
  outcome.signal = InterruptWatcher::received();
  run.controller.Shutdown();
  for (auto& r : replicas) {
    std::lock_guard<std::mutex> lock(r->mu);
    outcome.replicas.push_back(std::move(r->out));
  }
  return outcome;
}

}  // namespace heapprof::cli
