// WorkerPool: replica threads with bounded queues, and isolate re-creation
// after a request ran past the time limit (the runtime terminates it) or the
// isolate hit its heap limit. Only the runtime's and controller's public API.
#include "heapprof/serve/worker_pool.h"

#include <atomic>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <mutex>
#include <optional>
#include <thread>

#include <fmt/format.h>

#include "heapprof/core/file_io.h"
#include "heapprof/core/text.h"
#include "heapprof/runtime/durable_object_targets.h"

namespace heapprof {
namespace {

namespace fs = std::filesystem;

// How often an idle replica answers the controller (Pump).
constexpr auto kIdlePoll = std::chrono::milliseconds(5);

struct Job {
  WorkerRequest request;
  WorkerDone done;
};

}  // namespace

// One replica: its isolate lives and dies on `thread`.
struct Replica {
  std::string name;
  std::thread thread;

  std::mutex mu;  // guards the queue, `stopping`, `aborted` and `running`
  std::condition_variable cv;
  std::deque<Job> queue;
  bool stopping = false;
  bool aborted = false;  // Abort() ended what was pending
  // The runtime while it dispatches a request (so Abort can terminate it from
  // another thread), and since when.
  WorkerRuntime* running = nullptr;
  std::chrono::steady_clock::time_point running_since;

  std::atomic<uint64_t> served{0}, failures{0}, restarts{0};
  // Isolates created so far (a failed re-load counts too): the generation
  // between_requests names, so each isolate gets a leak session of its own.
  uint64_t isolates = 0;  // on `thread` only
  std::atomic<uint64_t> heap_used{0}, heap_limit{0};

  std::optional<WorkerRuntime> runtime;  // on `thread` only
  // The worker's Durable Objects as the controller's targets (null without
  // a controller or objects); its hooks are in each runtime's options.
  std::unique_ptr<DurableObjectTargets> objects;
};

class WorkerPool::Impl {
 public:
  explicit Impl(WorkerPoolOptions options) : options_(std::move(options)) {}

  // On the replica's thread: creates the isolate, registers it, loads the
  // worker. between_requests runs once before the worker's module loads, so
  // that a leak session's sampler sees what the module's top level keeps (a
  // cache filled at load then reads as full from the start, not as growing
  // while it turns over).
  Status Load(Replica& r) {
    WorkerOptions wo = options_.worker_options;
    wo.name = r.name;
    if (r.objects) r.objects->Install(wo);
    HEAPPROF_ASSIGN_OR_RETURN(WorkerRuntime created, WorkerRuntime::Create(wo));
    r.runtime.emplace(std::move(created));
    ++r.isolates;
    if (options_.controller != nullptr) {
      if (Status s = options_.controller->Register(r.name, r.runtime->isolate()); !s.ok()) {
        r.runtime.reset();
        return s;
      }
    }
    if (options_.between_requests) {
      options_.between_requests(r.name, *r.runtime, r.served.load() + r.failures.load(), r.isolates);
    }
    if (Status s = r.runtime->LoadFile(options_.worker); !s.ok()) {
      Unload(r);
      return s;
    }
    UpdateHeap(r);
    if (options_.controller == nullptr) return Status::Ok();
    if (!options_.capture_dir.empty()) {
      HEAPPROF_RETURN_IF_ERROR(options_.controller->EnableNearHeapLimitCapture(
          r.name,
          [this, &r](Result<WindowProfile> p) {
            if (!p.ok()) {
              fmt::print(stderr, "heapprof: {}: near-heap-limit capture failed: {}\n", r.name, p.status().message());
              return;
            }
            std::string path = WindowFilePath(options_.capture_dir, r.name, p->profile.time_nanos);
            // A full disk does not lose the capture: a fallback folder takes it, said as it happens.
            Delivery d = WriteOrFallBack(path, FallbackDirs(options_.capture_fallback_dir),
                                         [&](const std::string& to) { return WriteFileAtomic(to, p->pprof_gzip); });
            std::lock_guard<std::mutex> lock(captures_mu_);
            if (!d.at_named_path()) {
              std::string error =
                  fmt::format("{}: near-heap-limit capture: {}{}", r.name, d.failures.front(), d.Where());
              fmt::print(stderr, "heapprof: {}\n", error);
              std::fflush(stderr);
              capture_errors_.push_back(std::move(error));
            }
            if (!d.written.empty()) captures_.push_back({r.name, d.written});
          },
          options_.capture_options));
    }
    return Status::Ok();
  }

  // On the replica's thread: unregisters and disposes the isolate.
  void Unload(Replica& r) {
    if (!r.runtime) return;
    if (r.objects) r.objects->UnregisterAll();  // the objects' isolates go with the worker's runtime
    if (options_.controller != nullptr) (void)options_.controller->Unregister(r.name);
    r.runtime.reset();
  }

  void UpdateHeap(Replica& r) {
    HeapUsage usage = r.runtime->heap_usage();
    r.heap_used = usage.used_bytes;
    r.heap_limit = usage.limit_bytes;
  }

  void Pump(Replica& r) {
    if (options_.controller != nullptr && r.runtime) options_.controller->Pump(r.runtime->isolate());
    if (r.objects && r.runtime) r.objects->Pump(*r.runtime);
    if (options_.between_requests && r.runtime) {
      options_.between_requests(r.name, *r.runtime, r.served.load() + r.failures.load(), r.isolates);
    }
  }

  // The replica's thread after a successful Load: serve until told to stop
  // and the queue is empty.
  void Serve(Replica& r) {
    for (;;) {
      std::optional<Job> job;
      {
        std::unique_lock<std::mutex> lock(r.mu);
        if (r.queue.empty() && !r.stopping) r.cv.wait_for(lock, kIdlePoll);
        if (!r.queue.empty()) {
          job.emplace(std::move(r.queue.front()));
          r.queue.pop_front();
        } else if (r.stopping) {
          break;
        }
      }
      if (!job) {
        Pump(r);
        continue;
      }
      job->done(Dispatch(r, job->request));
      Pump(r);
    }
    Unload(r);
  }

  Result<WorkerResponse> Dispatch(Replica& r, const WorkerRequest& request) {
    if (!r.runtime) {
      // A re-creation failed earlier; try again now.
      if (Status s = Load(r); !s.ok()) {
        ++r.failures;
        return Error(ErrorCode::kUnavailable, "the worker could not be reloaded: " + s.message());
      }
    }
    {
      // Either Abort sees `running` and terminates it, or this sees `aborted`.
      std::lock_guard<std::mutex> lock(r.mu);
      if (r.aborted) return Error(ErrorCode::kUnavailable, "the service shut down before this request ran");
      r.running = &*r.runtime;
      r.running_since = std::chrono::steady_clock::now();
    }
    Result<WorkerResponse> response = r.runtime->Dispatch(request);
    bool aborted = false;
    {
      std::lock_guard<std::mutex> lock(r.mu);
      r.running = nullptr;
      aborted = r.aborted;
    }
    if (aborted && !response.ok()) {
      // Terminated by Abort (or failing anyway as the service stops); the
      // isolate is disposed next, so nothing is recreated.
      ++r.failures;
      return Error(ErrorCode::kUnavailable,
                   "the service shut down while this request was still running, and "
                   "terminated it");
    }
    if (!response.ok() && response.status().code() == ErrorCode::kDeadlineExceeded) {
      // The runtime terminated the JavaScript; a fresh isolate drops whatever
      // state the stuck request left half-built.
      ++r.failures;
      Recreate(r);
      return Error(ErrorCode::kDeadlineExceeded,
                   fmt::format("{}; {} was recreated", response.status().message(), r.name));
    }
    if (!response.ok()) {
      ++r.failures;
      if (r.runtime->heap_limit_reached()) {
        Recreate(r);
        return Error(ErrorCode::kResourceExhausted,
                     fmt::format("the worker exceeded its heap limit; {} was recreated", r.name));
      }
      return response;
    }
    uint64_t served = ++r.served;
    if (served % 64 == 1) UpdateHeap(r);
    return response;
  }

  void Recreate(Replica& r) {
    Unload(r);
    ++r.restarts;
    if (Status s = Load(r); !s.ok()) {
      fmt::print(stderr, "heapprof: {}: could not recreate the isolate: {}\n", r.name, s.message());
      Unload(r);
    }
  }

  WorkerPoolOptions options_;
  std::vector<std::unique_ptr<Replica>> replicas_;
  std::atomic<uint64_t> next_{0};
  std::atomic<bool> shut_down_{false};
  mutable std::mutex captures_mu_;
  std::vector<CaptureFile> captures_;
  std::vector<std::string> capture_errors_;
};

Result<std::unique_ptr<WorkerPool>> WorkerPool::Start(const WorkerPoolOptions& options) {
  if (options.names.empty()) return Error(ErrorCode::kInvalidArgument, "a worker pool needs at least one replica");
  if (!options.capture_dir.empty() && options.controller == nullptr) {
    return Error(ErrorCode::kInvalidArgument, "near-heap-limit capture needs a controller");
  }
  if (options.queue_limit == 0) return Error(ErrorCode::kInvalidArgument, "the request queue limit must be at least 1");
  auto impl = std::make_unique<Impl>(options);
  for (const std::string& name : options.names) {
    auto r = std::make_unique<Replica>();
    r->name = name;
    if (options.controller != nullptr && !options.worker_options.durable_objects.empty()) {
      r->objects = std::make_unique<DurableObjectTargets>(*options.controller);
    }
    impl->replicas_.push_back(std::move(r));
  }
  // Each replica loads on its own thread and reports back before serving.
  std::mutex mu;
  std::condition_variable cv;
  size_t loaded = 0;
  std::vector<Status> statuses(impl->replicas_.size());
  Impl* raw = impl.get();
  for (size_t i = 0; i < raw->replicas_.size(); ++i) {
    Replica* r = raw->replicas_[i].get();
    r->thread = std::thread([raw, r, i, &mu, &cv, &loaded, &statuses] {
      Status s = raw->Load(*r);
      {
        std::lock_guard<std::mutex> lock(mu);
        statuses[i] = s;
        ++loaded;
      }
      cv.notify_all();
      if (!s.ok()) {
        raw->Unload(*r);
        return;
      }
      raw->Serve(*r);
    });
  }
  {
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return loaded == raw->replicas_.size(); });
  }
  auto pool = std::unique_ptr<WorkerPool>(new WorkerPool(std::move(impl)));
  for (size_t i = 0; i < statuses.size(); ++i) {
    if (!statuses[i].ok()) {
      pool->Shutdown();
      return Error(statuses[i].code(), fmt::format("{}: {}", options.names[i], statuses[i].message()));
    }
  }
  return pool;
}

WorkerPool::WorkerPool(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
WorkerPool::~WorkerPool() { Shutdown(); }

size_t WorkerPool::size() const { return impl_->replicas_.size(); }
const std::string& WorkerPool::name(size_t replica) const { return impl_->replicas_.at(replica)->name; }

int WorkerPool::Find(std::string_view name_or_number) const {
  for (size_t i = 0; i < impl_->replicas_.size(); ++i) {
    if (impl_->replicas_[i]->name == name_or_number) return static_cast<int>(i);
  }
  size_t index = 0;
  auto [end, ec] = std::from_chars(name_or_number.data(), name_or_number.data() + name_or_number.size(), index);
  if (ec == std::errc() && end == name_or_number.data() + name_or_number.size() && !name_or_number.empty() &&
      index < impl_->replicas_.size()) {
    return static_cast<int>(index);
  }
  return -1;
}

size_t WorkerPool::NextReplica() { return impl_->next_.fetch_add(1) % impl_->replicas_.size(); }

Status WorkerPool::Submit(size_t replica, WorkerRequest request, WorkerDone done) {
  if (replica >= impl_->replicas_.size()) return Error(ErrorCode::kNotFound, "no such replica");
  Replica& r = *impl_->replicas_[replica];
  {
    std::lock_guard<std::mutex> lock(r.mu);
    if (r.stopping) return Error(ErrorCode::kUnavailable, "the service is shutting down");
    if (r.queue.size() >= impl_->options_.queue_limit) {
      return Error(ErrorCode::kUnavailable, fmt::format("{} has {} requests waiting (the queue limit); try again later",
                                                        r.name, r.queue.size()));
    }
    r.queue.push_back({std::move(request), std::move(done)});
  }
  r.cv.notify_one();
  return Status::Ok();
}

std::vector<TargetStatus> WorkerPool::Stats() const {
  std::vector<TargetStatus> out;
  for (const auto& r : impl_->replicas_) {
    out.push_back(
        {r->name, r->heap_used.load(), r->heap_limit.load(), r->served.load(), r->failures.load(), r->restarts.load()});
  }
  return out;
}

std::vector<TargetStatus> WorkerPool::ObjectStats() const {
  std::vector<TargetStatus> out;
  for (const auto& r : impl_->replicas_) {
    if (!r->objects) continue;
    for (const DurableObjectTarget& o : r->objects->Targets()) {
      TargetStatus t{o.name, o.report.heap_used_bytes, o.heap_limit_bytes, o.report.requests, 0, o.report.restarts};
      // By its 64-hex id too (lower case; the endpoints compare it so).
      if (!o.report.name.empty()) t.aliases.push_back(o.report.binding + ":" + o.report.id);
      out.push_back(std::move(t));
    }
  }
  return out;
}

std::vector<CaptureFile> WorkerPool::Captures() const {
  std::lock_guard<std::mutex> lock(impl_->captures_mu_);
  return impl_->captures_;
}

std::vector<std::string> WorkerPool::CaptureErrors() const {
  std::lock_guard<std::mutex> lock(impl_->captures_mu_);
  return impl_->capture_errors_;
}

void WorkerPool::Shutdown() {
  if (impl_->shut_down_.exchange(true)) return;
  for (auto& r : impl_->replicas_) {
    {
      std::lock_guard<std::mutex> lock(r->mu);
      r->stopping = true;
    }
    r->cv.notify_all();
  }
  for (auto& r : impl_->replicas_) {
    if (r->thread.joinable()) r->thread.join();
  }
}

std::vector<AbortedRequests> WorkerPool::Abort() {
  std::vector<AbortedRequests> out;
  std::vector<Job> refused;
  const auto now = std::chrono::steady_clock::now();
  for (auto& r : impl_->replicas_) {
    AbortedRequests a;
    a.replica = r->name;
    {
      std::lock_guard<std::mutex> lock(r->mu);
      r->stopping = true;
      r->aborted = true;
      a.queued = r->queue.size();
      for (Job& job : r->queue) refused.push_back(std::move(job));
      r->queue.clear();
      if (r->running != nullptr) {
        // Safe from any thread; under the lock, so the runtime is not disposed meanwhile.
        r->running->Terminate();
        a.running = true;
        a.running_for = now - r->running_since;
      }
    }
    r->cv.notify_all();
    if (a.running || a.queued > 0) out.push_back(std::move(a));
  }
  // Outside the locks: a responder may take its time.
  for (Job& job : refused) {
    job.done(Error(ErrorCode::kUnavailable, "the service shut down before this request ran"));
  }
  return out;
}

}  // namespace heapprof
