// The debug endpoints' profile source for a live service: windows through the
// controller on the pool's replicas and their Durable Objects (each object a
// target "NS:NAME" of its own isolate), source-mapped off the isolate's thread.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "heapprof/core/source_map_locator.h"
#include "heapprof/http/pprof_endpoints.h"
#include "heapprof/serve/leak_sessions.h"
#include "heapprof/serve/worker_pool.h"
#include "heapprof/v8/controller.h"
#include "heapprof/v8/session.h"

namespace heapprof {

class PoolProfileSource final : public ProfileSource {
 public:
  // `session` configures every window (interval, depth, GC before snapshot);
  // `source_maps` says where maps may be read (nullopt: profiles stay unmapped).
  PoolProfileSource(Controller& controller, WorkerPool& pool, SessionOptions session,
                    std::optional<SourceMapSearch> source_maps);
  ~PoolProfileSource() override;

  std::vector<TargetStatus> Targets() override;
  // Cancelling ends the target's window at once (Controller::EndWindows).
  Result<Profile> Window(const std::string& target, std::chrono::nanoseconds duration, CancelSignal& cancel) override;
  Result<Profile> SinceContinuousStart(const std::string& target) override;
  std::vector<CaptureFile> Captures() override;
  // serve --leaks: the replicas' leak sessions (null: none).
  void SetLeakSessions(PoolLeakSessions* leaks) { leaks_ = leaks; }
  Result<std::string> LeakReportJson(const std::string& target) override;
  bool HasLeakSessions() override { return leaks_ != nullptr; }

  // Receives each closed window of a rotating continuous run.
  using WindowSink = std::function<void(const std::string& target, Result<Profile> window)>;

  // Opens a window on every replica that stays open until SinceContinuousStart
  // cuts it (and opens the next) or EndContinuous ends it. With `every` > 0
  // a thread of its own cuts every replica's window each `every` instead
  // (the next one opens before the last one closes, so no sample falls
  // between), hands it to `sink`, and SinceContinuousStart answers the last
  // closed window.
  void StartContinuous(std::chrono::nanoseconds every = {}, WindowSink sink = {});
  // Stops the rotation (no window opens after it returns); call before
  // Controller::EndWindows() at shutdown.
  void StopRotation();
  // After Controller::EndWindows(): each replica's last continuous window.
  std::vector<std::pair<std::string, Result<Profile>>> EndContinuous();

 private:
  struct Continuous {
    std::mutex mu;
    std::future<Result<WindowProfile>> window;
    uint64_t id = 0;              // the open window's, for Controller::EndWindow
    std::optional<Profile> last;  // rotating: the last closed window
  };
  // Opens the target's next window, then closes the open one: its profile.
  Result<Profile> Cut(const std::string& target, Continuous& c);
  void Rotate();
  // Opens a window; `window_id` gets its id for Controller::EndWindow.
  std::future<Result<WindowProfile>> Open(const std::string& target, std::chrono::nanoseconds duration,
                                          uint64_t* window_id);

  Result<Profile> Finish(Result<WindowProfile> window);

  Controller& controller_;
  WorkerPool& pool_;
  SessionOptions session_;
  std::optional<SourceMapSearch> source_maps_;
  PoolLeakSessions* leaks_ = nullptr;
  std::map<std::string, std::unique_ptr<Continuous>> continuous_;  // filled before serving, then fixed
  std::chrono::nanoseconds every_{0};
  WindowSink sink_;
  std::mutex rotation_mu_;
  std::condition_variable rotation_cv_;
  bool rotation_stop_ = false;
  std::thread rotation_;
};

}  // namespace heapprof
