// LiveService: the worker listener routes requests to the pool's replicas;
// the debug listener runs the pprof endpoints on threads of their own.
#include "heapprof/serve/live_service.h"

#include <atomic>
#include <condition_variable>
#include <list>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "heapprof/core/file_io.h"
#include "heapprof/core/pprof.h"
#include "heapprof/core/text.h"
#include "heapprof/http/http_server.h"
#include "heapprof/http/pprof_endpoints.h"
#include "heapprof/serve/pool_profile_source.h"
#include "heapprof/v8/controller.h"

namespace heapprof {
namespace {

constexpr std::string_view kReplicaHeader = "X-Heapprof-Replica";

// 503 for what the worker's code did not cause (Retry may succeed), 500 for what it did.
int HttpStatusForWorkerFailure(WorkerFailure failure) {
  switch (failure) {
    case WorkerFailure::kTimedOut:    // time limit
    case WorkerFailure::kHeapLimit:   // heap limit
    case WorkerFailure::kNotRun:      // shutting down, reload failed
    case WorkerFailure::kTerminated:  // ended by the shutdown
      return 503;
    case WorkerFailure::kThrew:
    case WorkerFailure::kRejected:
    case WorkerFailure::kBadResponse:
    case WorkerFailure::kStalled:
    case WorkerFailure::kInternal:
      return 500;
  }
  return 500;
}

}  // namespace

class LiveService::Impl {
 public:
  explicit Impl(LiveServiceOptions options) : options_(std::move(options)) {}

  // Picks the replica and the URL path the worker sees.
  Result<size_t> Route(HttpRequest& request) {
    std::string_view wanted = HeaderValue(request.headers, kReplicaHeader);
    if (!wanted.empty()) {
      int index = pool_->Find(wanted);
      if (index < 0) return Error(ErrorCode::kNotFound, fmt::format("no replica {} ({})", wanted, Names()));
      return static_cast<size_t>(index);
    }
    if (replica_prefix_ && request.target.starts_with("/@")) {
      size_t end = request.target.find_first_of("/?", 2);
      std::string segment = request.target.substr(2, end == std::string::npos ? std::string::npos : end - 2);
      Result<std::string> decoded = PercentDecode(segment);
      int index = decoded.ok() ? pool_->Find(decoded.value()) : -1;
      if (index < 0) return Error(ErrorCode::kNotFound, fmt::format("no replica {} ({})", segment, Names()));
      std::string rest = end == std::string::npos ? "/" : request.target.substr(end);
      request.target = rest.starts_with("?") ? "/" + rest : rest;
      return static_cast<size_t>(index);
    }
    return pool_->NextReplica();
  }

  std::string Names() const {
    std::string names;
    for (size_t i = 0; i < pool_->size(); ++i) names += fmt::format("{}{} = {}", i ? ", " : "", i, pool_->name(i));
    return names;
  }

  void HandleWorker(HttpRequest request, HttpResponder respond) {
    Result<size_t> replica = Route(request);
    if (!replica.ok()) return respond(TextResponse(404, replica.status().message()));
    std::string name = pool_->name(replica.value());
    WorkerRequest wr;
    wr.method = std::move(request.method);
    std::string host(HeaderValue(request.headers, "host"));
    wr.url = fmt::format("http://{}{}", host.empty() ? listen_address_ : host, request.target);
    wr.headers = std::move(request.headers);
    wr.body = std::move(request.body);
    auto shared = std::make_shared<HttpResponder>(std::move(respond));
    Status queued = pool_->Submit(replica.value(), std::move(wr), [shared, name](DispatchResult r) {
      HttpResponse response;
      if (r.ok()) {
        response = std::move(r).value();  // the worker's answer is the HTTP response
      } else {
        response = TextResponse(HttpStatusForWorkerFailure(r.failure()), r.status().message());
      }
      response.headers.emplace_back(std::string(kReplicaHeader), name);
      (*shared)(std::move(response));
    });
    if (!queued.ok()) {
      ++refused_;
      HttpResponse response = TextResponse(503, queued.message());
      response.headers.emplace_back("Retry-After", "1");
      response.headers.emplace_back(std::string(kReplicaHeader), name);
      (*shared)(std::move(response));
    }
  }

  void HandleDebug(HttpRequest request, HttpResponder respond) {
    if (!PprofEndpoints::Handles(request.target)) {
      return respond(TextResponse(404, "not a debug endpoint; see /debug/pprof/"));
    }
    std::lock_guard<std::mutex> lock(debug_mu_);
    if (stopping_) return respond(TextResponse(503, "the service is shutting down"));
    // Join the threads of answered requests, so a scraper polling for days leaves none behind.
    for (auto it = debug_threads_.begin(); it != debug_threads_.end();) {
      if (it->done->load()) {
        it->thread.join();
        it = debug_threads_.erase(it);
      } else {
        ++it;
      }
    }
    // A window takes seconds: answer on a thread of its own.
    auto done = std::make_shared<std::atomic<bool>>(false);
    std::thread t([this, done, request = std::move(request), respond = std::move(respond)] {
      respond(endpoints_->Handle(request));
      *done = true;
    });
    debug_threads_.push_back({std::move(t), std::move(done)});
  }

  void Shutdown() {
    {
      std::lock_guard<std::mutex> lock(debug_mu_);
      if (stopping_) return;
      stopping_ = true;
    }
    if (source_) source_->StopRotation();  // no continuous window opens after this
    controller_.EndWindows();              // open windows end now and go to their clients
    std::thread debug_stop([this] {
      if (debug_server_) debug_server_->Shutdown();
    });
    // Requests already received are answered: by the worker when it finishes
    // them within shutdown_timeout, else with 503 by Abort, which terminates
    // the JavaScript of those still running (with no time limit it could run
    // forever, and the server's Shutdown would wait for it).
    std::mutex mu;
    std::condition_variable cv;
    bool answered = false;
    std::thread main_stop([&] {
      if (server_) server_->Shutdown();
      std::lock_guard<std::mutex> lock(mu);
      answered = true;
      cv.notify_all();
    });
    {
      std::unique_lock<std::mutex> lock(mu);
      if (!cv.wait_for(lock, options_.shutdown_timeout, [&] { return answered; })) {
        lock.unlock();
        if (pool_) aborted_ = pool_->Abort();
      }
    }
    main_stop.join();
    debug_stop.join();
    for (DebugThread& t : debug_threads_) t.thread.join();
    debug_threads_.clear();
    if (source_) WriteContinuous();
    if (pool_) pool_->Shutdown();
    if (leaks_) final_leaks_ = leaks_->FinalReports();
    controller_.Shutdown();
  }

  // The continuous windows, ended by EndWindows, to continuous_dir.
  void WriteContinuous() {
    for (auto& [name, profile] : source_->EndContinuous()) {
      if (options_.continuous_sink) {
        options_.continuous_sink(name, std::move(profile));
        continue;
      }
      if (!profile.ok()) {
        written_errors_.push_back(name + ": " + profile.status().message());
        continue;
      }
      std::string path = WindowFilePath(options_.continuous_dir, name, profile->time_nanos);
      // The same file name in the fallback folders, never over a file.
      Delivery d = WriteOrFallBack(path, FallbackDirs(options_.fallback_dir),
                                   [&](const std::string& to) { return WritePprofFile(to, profile.value()); });
      if (!d.written.empty()) written_.push_back(d.written);
      if (!d.at_named_path()) written_errors_.push_back(name + ": " + d.failures.front() + d.Where());
    }
  }

  LiveServiceOptions options_;
  std::vector<std::string> written_, written_errors_;
  Controller controller_;
  std::unique_ptr<PoolLeakSessions> leaks_;  // before the pool: its threads tick the sessions
  std::vector<FinalLeakReport> final_leaks_;
  std::unique_ptr<WorkerPool> pool_;
  std::unique_ptr<PoolProfileSource> source_;
  std::unique_ptr<PprofEndpoints> endpoints_;
  std::unique_ptr<HttpServer> server_;
  std::unique_ptr<HttpServer> debug_server_;
  std::string listen_address_;
  bool replica_prefix_ = true;
  std::atomic<uint64_t> refused_{0};
  std::vector<AbortedRequests> aborted_;

  std::mutex debug_mu_;
  bool stopping_ = false;
  struct DebugThread {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };
  std::list<DebugThread> debug_threads_;
};

Result<std::unique_ptr<LiveService>> LiveService::Start(const LiveServiceOptions& options) {
  if (!options.debug_listen.empty() && !IsLoopbackListen(options.debug_listen) && options.debug.tokens.empty() &&
      !options.debug_insecure) {
    return Error(ErrorCode::kInvalidArgument,
                 fmt::format("the debug listener {} is reachable from other hosts, and anyone who reaches it could "
                             "profile every replica: give it tokens (--debug-token-file) or say --debug-insecure",
                             options.debug_listen));
  }
  auto impl = std::make_unique<Impl>(options);
  Impl* raw = impl.get();
  WorkerPoolOptions pool_options = options.pool;
  pool_options.controller = &raw->controller_;
  if (pool_options.capture_fallback_dir.empty()) pool_options.capture_fallback_dir = options.fallback_dir;
  if (pool_options.capture_options.interval_bytes == SessionOptions{}.interval_bytes) {
    pool_options.capture_options = options.session;
  }
  if (options.leaks) {
    LeakSessionOptions leak_options = *options.leaks;
    leak_options.sampling = options.session;
    leak_options.full_gc = options.session.gc_before_snapshot;
    leak_options.heap_limit_bytes = options.pool.worker_options.heap_limit_bytes;
    raw->leaks_ =
        std::make_unique<PoolLeakSessions>(raw->controller_, options.pool.names, leak_options, options.source_maps);
    pool_options.between_requests = [leaks = raw->leaks_.get()](const std::string& name, WorkerRuntime& runtime,
                                                                uint64_t requests, uint64_t generation) {
      leaks->Tick(name, runtime, requests, generation);
    };
  }
  HEAPPROF_ASSIGN_OR_RETURN(raw->pool_, WorkerPool::Start(pool_options));
  raw->source_ =
      std::make_unique<PoolProfileSource>(raw->controller_, *raw->pool_, options.session, options.source_maps);
  raw->source_->SetLeakSessions(raw->leaks_.get());
  raw->replica_prefix_ = options.replica_prefix.value_or(options.pool.names.size() > 1);
  PprofEndpointOptions endpoint_options = options.debug;
  endpoint_options.continuous = options.continuous;
  raw->endpoints_ = std::make_unique<PprofEndpoints>(*raw->source_, endpoint_options);
  if (options.continuous && options.continuous_every > std::chrono::nanoseconds::zero() && !options.continuous_sink) {
    return Error(ErrorCode::kInvalidArgument, "continuous windows cut on a period need a sink for them");
  }
  if (options.continuous) raw->source_->StartContinuous(options.continuous_every, options.continuous_sink);
  auto service = std::unique_ptr<LiveService>(new LiveService(std::move(impl)));

  HttpServerOptions main = options.limits;
  main.listen = options.listen;
  main.threads = options.http_threads;
  HEAPPROF_ASSIGN_OR_RETURN(raw->server_, HttpServer::Start(main, [raw](HttpRequest r, HttpResponder respond) {
                              raw->HandleWorker(std::move(r), std::move(respond));
                            }));
  raw->listen_address_ = raw->server_->address();
  if (!options.debug_listen.empty()) {
    HttpServerOptions debug = options.limits;
    debug.listen = options.debug_listen;
    debug.threads = 1;
    debug.tls_certificate_file = options.debug_tls_certificate;
    debug.tls_key_file = options.debug_tls_key;
    HEAPPROF_ASSIGN_OR_RETURN(raw->debug_server_, HttpServer::Start(debug, [raw](HttpRequest r, HttpResponder respond) {
                                raw->HandleDebug(std::move(r), std::move(respond));
                              }));
  }
  return service;
}

LiveService::LiveService(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
LiveService::~LiveService() { Shutdown(); }

std::string LiveService::address() const { return impl_->server_ ? impl_->server_->address() : ""; }
std::string LiveService::debug_address() const { return impl_->debug_server_ ? impl_->debug_server_->address() : ""; }

std::string LiveService::debug_url() const {
  if (!impl_->debug_server_) return "";
  return fmt::format("{}://{}", impl_->debug_server_->tls() ? "https" : "http", impl_->debug_server_->address());
}

void LiveService::Shutdown() { impl_->Shutdown(); }

LiveServiceSummary LiveService::Summary() const {
  LiveServiceSummary s;
  if (impl_->pool_) s.replicas = impl_->pool_->Stats();
  s.refused = impl_->refused_.load();
  s.written = impl_->written_;
  s.errors = impl_->written_errors_;
  if (impl_->pool_) {
    for (std::string& e : impl_->pool_->CaptureErrors()) s.errors.push_back(std::move(e));
  }
  s.aborted = impl_->aborted_;
  s.leaks = impl_->final_leaks_;
  return s;
}

}  // namespace heapprof
