#include "tools/heapprof/run_replicas.h"

#include <v8.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "heapprof/v8/controller.h"
#include "heapprof/file_io.h"
#include "heapprof/report.h"
#include "heapprof/v8/worker_runtime.h"
#include "tools/heapprof/commands.h"
#include "tools/heapprof/interrupt.h"

namespace heapprof::cli {
namespace {

namespace fs = std::filesystem;

// One replica: its own isolate and thread, serving until told to stop.
struct Replica {
  std::string name;
  std::thread thread;
  std::atomic<bool> ready{false};
  std::mutex mu;
  std::string error;       // load or serve failure
  uint64_t served = 0;
  std::string near_limit;  // what the near-limit capture did
};

// The file for one replica: `output` itself when there is one target, else
// `<stem>-<replica>.pb.gz` beside it.
std::string FileFor(const std::string& output, const std::string& replica, bool only_one) {
  if (only_one) return output;
  fs::path out(output);
  std::string stem = out.filename().string();
  for (const char* ext : {".pb.gz", ".pb", ".gz"}) {
    if (stem.size() > std::strlen(ext) && stem.ends_with(ext)) {
      stem.resize(stem.size() - std::strlen(ext));
      break;
    }
  }
  return (out.parent_path() / fmt::format("{}-{}.pb.gz", stem, replica)).string();
}

std::string SafeName(std::string s) {
  for (char& c : s) {
    if (c == '#' || c == '/' || c == ' ') c = '-';
  }
  return s;
}

void Serve(Controller& controller, const ReplicaRun& run, Replica& r, const std::atomic<bool>& stop) {
  WorkerOptions wo;
  wo.name = r.name;
  wo.heap_limit_bytes = run.heap_limit_bytes;
  Result<WorkerRuntime> created = WorkerRuntime::Create(wo);
  auto fail = [&](const std::string& message) {
    std::lock_guard<std::mutex> lock(r.mu);
    r.error = message;
  };
  if (!created.ok()) {
    fail(created.status().message());
    r.ready = true;
    return;
  }
  WorkerRuntime& runtime = created.value();
  v8::Isolate* isolate = runtime.isolate().get();
  if (Status s = runtime.LoadFile(run.worker); !s.ok()) {
    fail(s.message());
    r.ready = true;
    return;
  }
  {
    v8::Isolate::Scope scope(isolate);
    v8::HandleScope handles(isolate);
    if (Status s = controller.Register(r.name, isolate); !s.ok()) fail(s.message());
    if (!run.on_heap_limit.empty()) {
      std::string path = FileFor(run.on_heap_limit, SafeName(r.name), run.replicas == 1);
      Status s = controller.EnableNearHeapLimitCapture(
          r.name,
          [&r, path](Result<WindowProfile> p) {
            std::string what = p.ok() ? (WriteFileAtomic(path, p->pprof_gzip).ok() ? "wrote " + path
                                                                                    : "could not write " + path)
                                      : "capture failed: " + p.status().message();
            std::lock_guard<std::mutex> lock(r.mu);
            r.near_limit = what;
          },
          run.session);
      if (!s.ok()) fail(s.message());
    }
  }
  r.ready = true;
  for (uint64_t i = 0; !stop.load(); ++i) {
    Result<WorkerResponse> response = runtime.Dispatch(SyntheticRequest(i));
    if (!response.ok()) {
      fail(response.status().message());
      break;
    }
    ++r.served;
    controller.Pump(isolate);
  }
  // Keep answering the controller until the run ends, then leave.
  while (!stop.load()) {
    controller.Pump(isolate);
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  v8::Isolate::Scope scope(isolate);
  v8::HandleScope handles(isolate);
  (void)controller.Unregister(r.name);
}

}  // namespace

int RunReplicas(const ReplicaRun& run) {
  Controller controller;
  std::atomic<bool> stop{false};
  std::vector<std::unique_ptr<Replica>> replicas;
  std::string stem = fs::path(run.worker).stem().string();
  for (int i = 0; i < run.replicas; ++i) {
    auto r = std::make_unique<Replica>();
    r->name = run.replicas == 1 ? stem : fmt::format("{}#{}", stem, i);
    replicas.push_back(std::move(r));
  }
  if (!run.target.empty() &&
      std::none_of(replicas.begin(), replicas.end(), [&](const auto& r) { return r->name == run.target; })) {
    std::string names;
    for (const auto& r : replicas) names += (names.empty() ? "" : ", ") + r->name;
    return UsageError("run", fmt::format("no replica named {} (the replicas are {})", run.target, names));
  }
  for (auto& r : replicas) {
    Replica* raw = r.get();
    r->thread = std::thread([&controller, &run, raw, &stop] { Serve(controller, run, *raw, stop); });
  }
  for (auto& r : replicas) {
    while (!r->ready.load()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  auto finish = [&] {
    stop = true;
    for (auto& r : replicas) r->thread.join();
  };
  for (auto& r : replicas) {
    std::lock_guard<std::mutex> lock(r->mu);
    if (!r->error.empty() && r->served == 0) {
      std::string error = r->error;
      finish();
      return Fail("run", r->name + ": " + error);
    }
  }

  // Ctrl-C / SIGTERM: the windows end at once and what they hold is written;
  // the run then ends with 130 / 143. (A second signal ends heapprof at once.)
  std::mutex signal_mu;
  std::condition_variable signal_cv;
  InterruptWatcher interrupts([&] {
    controller.EndWindows();
    std::lock_guard<std::mutex> lock(signal_mu);
    signal_cv.notify_all();
  });
  auto wait_until = [&](std::chrono::steady_clock::time_point deadline) {
    std::unique_lock<std::mutex> lock(signal_mu);
    signal_cv.wait_until(lock, deadline, [] { return InterruptWatcher::received() != 0; });
  };

  auto start = std::chrono::steady_clock::now();
  wait_until(start + std::chrono::nanoseconds(run.warmup_ns));
  if (int signal = InterruptWatcher::received(); signal != 0) {
    finish();
    Fail("run", fmt::format("interrupted by {} during the warm-up; no profile written", SignalName(signal)));
    return InterruptedExitCode(signal);
  }
  std::vector<Replica*> targets;
  for (auto& r : replicas) {
    if (run.target.empty() || r->name == run.target) targets.push_back(r.get());
  }
  bool only_one = targets.size() == 1;
  int exit_code = kExitOk;

  if (run.continuous) {
    std::vector<uint64_t> ids;
    std::atomic<int> files{0}, failures{0};
    fs::path dir = fs::path(run.output).parent_path();
    if (dir.empty()) dir = ".";
    for (Replica* r : targets) {
      WindowRequest req{r->name, std::chrono::nanoseconds(run.window_ns), run.session};
      ProfileSink sink = RotatingFileSink(dir.string(), SafeName(r->name), [&](const Status& s) {
        ++failures;
        fmt::print(stderr, "heapprof run: {}\n", s.message());
      });
      Result<uint64_t> id = controller.StartContinuous(req, [sink, &files](Result<WindowProfile> p) {
        if (p.ok()) ++files;
        sink(std::move(p));
      });
      if (!id.ok()) {
        exit_code = Fail("run", id.status());
        continue;
      }
      ids.push_back(id.value());
    }
    wait_until(start + std::chrono::nanoseconds(run.duration_ns));
    for (uint64_t id : ids) controller.StopContinuous(id);  // each writes its last, partial window
    fmt::print("Continuous: {} profile{} of {} ms windows written to {}/ ({} failed)\n", files.load(),
               files.load() == 1 ? "" : "s",
               run.window_ns / 1'000'000, dir.string(), failures.load());
    if (failures.load() > 0) exit_code = kExitFailure;
  } else if (run.on_heap_limit.empty() || !run.target.empty() || run.replicas > 1) {
    std::vector<std::pair<Replica*, std::future<Result<WindowProfile>>>> pending;
    for (Replica* r : targets) {
      pending.emplace_back(r, controller.Profile({r->name, std::chrono::nanoseconds(run.window_ns), run.session}));
    }
    if (InterruptWatcher::received() != 0) controller.EndWindows();  // a signal while they were requested
    for (auto& [r, future] : pending) {
      Result<WindowProfile> p = future.get();
      if (!p.ok()) {
        exit_code = Fail("run", r->name + ": " + p.status().message());
        continue;
      }
      std::string path = FileFor(run.output, SafeName(r->name), only_one);
      if (Status s = WriteFileAtomic(path, p->pprof_gzip); !s.ok()) {
        exit_code = Fail("run", s);
        continue;
      }
      fmt::print("{}: wrote {}\n", r->name, path);
      if (run.top > 0) {
        TopOptions top;
        top.rows = static_cast<size_t>(run.top);
        top.sample_index = kInuseSpace;
        fmt::print("{}\n", FormatTopTable(p->profile, top));
      }
    }
  } else {
    wait_until(start + std::chrono::nanoseconds(run.duration_ns));
  }
  finish();
  for (auto& r : replicas) {
    std::lock_guard<std::mutex> lock(r->mu);
    fmt::print("{}: served {} requests{}{}\n", r->name, r->served, r->error.empty() ? "" : "; stopped: " + r->error,
               r->near_limit.empty() ? "" : "; near heap limit: " + r->near_limit);
    if (!r->error.empty() && exit_code == kExitOk) exit_code = kExitFailure;
  }
  if (int signal = InterruptWatcher::received(); signal != 0) {
    fmt::print(stderr, "heapprof run: interrupted by {}; the windows ended early and what they held was written\n",
               SignalName(signal));
    return InterruptedExitCode(signal);
  }
  return exit_code;
}

}  // namespace heapprof::cli
