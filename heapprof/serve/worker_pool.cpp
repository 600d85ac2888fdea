// WorkerPool: replicas (heapprof/runtime/worker_replica.h, which re-creates
// an isolate after a request ran past the time limit or hit the heap limit)
// with bounded request queues. Only the runtime's and controller's public API.
#include "heapprof/serve/worker_pool.h"

#include <atomic>
#include <charconv>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>

#include <fmt/format.h>

#include "heapprof/core/file_io.h"
#include "heapprof/core/text.h"
#include "heapprof/runtime/worker_replica.h"

namespace heapprof {
namespace {

// How often an idle replica answers the controller (Pump).
constexpr auto kIdlePoll = std::chrono::milliseconds(5);

struct Job {
  WorkerRequest request;
  WorkerDone done;
};

DispatchResult NotRunAtShutdown() {
  return {WorkerFailure::kNotRun, Error(ErrorCode::kUnavailable, "the service shut down before this request ran")};
}

}  // namespace

// One replica (heapprof/runtime/worker_replica.h) and its request queue.
struct Replica {
  std::mutex mu;  // guards the queue, `stopping` and `aborted`
  std::condition_variable cv;
  std::deque<Job> queue;
  bool stopping = false;
  bool aborted = false;  // Abort() ended what was pending

  std::optional<WorkerReplica> replica;
  const std::string& name() const { return replica->name(); }
};

class WorkerPool::Impl {
 public:
  explicit Impl(WorkerPoolOptions options) : options_(std::move(options)) {}

  // The replica's options. between_requests runs once per isolate before the
  // worker's module loads too, so that a leak session's sampler sees what the
  // module's top level keeps (a cache filled at load then reads as full from
  // the start, not as growing while it turns over).
  WorkerReplicaOptions ReplicaOptions(const std::string& name) {
    WorkerReplicaOptions o;
    o.name = name;
    o.worker = options_.worker;
    o.worker_options = options_.worker_options;
    o.worker_options.name = name;
    o.controller = options_.controller;
    o.recreate_after_failure = true;
    o.object_targets = true;
    if (options_.between_requests) {
      o.before_load = [this](WorkerReplica& r) {
        BetweenRequests(r);
        return Status::Ok();
      };
      o.between_requests = [this](WorkerReplica& r) { BetweenRequests(r); };
    }
    if (!options_.capture_dir.empty()) {
      o.near_limit_options = options_.capture_options;
      o.near_limit_sink = [this, name](Result<WindowProfile> p) { WriteCapture(name, std::move(p)); };
    }
    return o;
  }

  void BetweenRequests(WorkerReplica& r) {
    options_.between_requests(r.name(), *r.runtime(), r.served() + r.failures(), r.generation());
  }

  void WriteCapture(const std::string& name, Result<WindowProfile> p) {
    if (!p.ok()) {
      fmt::print(stderr, "heapprof: {}: near-heap-limit capture failed: {}\n", name, p.status().message());
      return;
    }
    std::string path = WindowFilePath(options_.capture_dir, name, p->profile.time_nanos);
    // A full disk does not lose the capture: a fallback folder takes it, said as it happens.
    Delivery d = WriteOrFallBack(path, FallbackDirs(options_.capture_fallback_dir),
                                 [&](const std::string& to) { return WriteFileAtomic(to, p->pprof_gzip); });
    std::lock_guard<std::mutex> lock(captures_mu_);
    if (!d.at_named_path()) {
      std::string error = fmt::format("{}: near-heap-limit capture: {}{}", name, d.failures.front(), d.Where());
      fmt::print(stderr, "heapprof: {}\n", error);
      std::fflush(stderr);
      capture_errors_.push_back(std::move(error));
    }
    if (!d.written.empty()) captures_.push_back({name, d.written});
  }

  // The replica's thread after a successful load: serve until told to stop
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
      if (job) job->done(Dispatch(r, job->request));
      r.replica->Idle();
    }
  }

  bool Aborted(Replica& r) {
    std::lock_guard<std::mutex> lock(r.mu);
    return r.aborted;
  }

  DispatchResult Dispatch(Replica& r, const WorkerRequest& request) {
    if (Aborted(r)) return NotRunAtShutdown();
    DispatchResult response = r.replica->Dispatch(request);
    if (!response.ok() && Aborted(r)) {
      // Terminated by Abort (or failing anyway as the service stops); the
      // isolate is disposed next, so nothing was recreated.
      if (response.failure() == WorkerFailure::kNotRun) return NotRunAtShutdown();
      return {WorkerFailure::kTerminated, Error(ErrorCode::kUnavailable,
                                                "the service shut down while this request was still running, and "
                                                "terminated it")};
    }
    return response;
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
    r->replica.emplace(impl->ReplicaOptions(name));
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
    r->replica->Start([raw, r, i, &mu, &cv, &loaded, &statuses](Status s) {
      {
        std::lock_guard<std::mutex> lock(mu);
        statuses[i] = s;
        ++loaded;
      }
      cv.notify_all();
      if (s.ok()) raw->Serve(*r);
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
const std::string& WorkerPool::name(size_t replica) const { return impl_->replicas_.at(replica)->name(); }

int WorkerPool::Find(std::string_view name_or_number) const {
  for (size_t i = 0; i < impl_->replicas_.size(); ++i) {
    if (impl_->replicas_[i]->name() == name_or_number) return static_cast<int>(i);
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
                                                        r.name(), r.queue.size()));
    }
    r.queue.push_back({std::move(request), std::move(done)});
  }
  r.cv.notify_one();
  return Status::Ok();
}

std::vector<TargetStatus> WorkerPool::Stats() const {
  std::vector<TargetStatus> out;
  for (const auto& r : impl_->replicas_) {
    const WorkerReplica& w = *r->replica;
    out.push_back({w.name(), w.heap().used_bytes, w.heap().limit_bytes, w.served(), w.failures(), w.restarts()});
  }
  return out;
}

std::vector<TargetStatus> WorkerPool::ObjectStats() const {
  std::vector<TargetStatus> out;
  for (const auto& r : impl_->replicas_) {
    for (const DurableObjectTarget& o : r->replica->ObjectTargets()) {
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
  for (auto& r : impl_->replicas_) r->replica->Join();
}

std::vector<AbortedRequests> WorkerPool::Abort() {
  std::vector<AbortedRequests> out;
  std::vector<Job> refused;
  for (auto& r : impl_->replicas_) {
    AbortedRequests a;
    a.replica = r->name();
    {
      std::lock_guard<std::mutex> lock(r->mu);
      r->stopping = true;
      r->aborted = true;
      a.queued = r->queue.size();
      for (Job& job : r->queue) refused.push_back(std::move(job));
      r->queue.clear();
      if (std::optional<std::chrono::nanoseconds> ran = r->replica->Terminate()) {
        a.running = true;
        a.running_for = *ran;
      }
    }
    r->cv.notify_all();
    if (a.running || a.queued > 0) out.push_back(std::move(a));
  }
  // Outside the locks: a responder may take its time.
  for (Job& job : refused) job.done(NotRunAtShutdown());
  return out;
}

}  // namespace heapprof
