// `heapprof run WORKER --runtime workerd`. The flags that only the embedded
// host can honour are refused up front; the rest map onto workerd's config,
// the load thread (the user's traffic, the failure policy, --responses-out,
// --requests, with the embedded runtime's parsing and records) and the
// DevTools windows of heapprof attach.
#include "tools/heapprof/run_workerd.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <atomic>
#include <filesystem>
#include <limits>
#include <map>
#include <mutex>
#include <thread>

#include "heapprof/remote/http_client.h"
#include "heapprof/remote/remote_profiler.h"
#include "heapprof/remote/workerd.h"
#include "heapprof/core/estimate.h"
#include "heapprof/core/file_io.h"
#include "heapprof/workload/outcomes.h"
#include "heapprof/workload/traffic.h"
#include "heapprof/core/units.h"
#include "heapprof/v8/attribution.h"
#include "heapprof/runtime/worker_runtime.h"
#include "tools/heapprof/commands.h"
#include "tools/heapprof/config_flags.h"
#include "tools/heapprof/interrupt.h"
#include "tools/heapprof/outputs.h"
#include "tools/heapprof/profile_report.h"
#include "tools/heapprof/remote_report.h"
#include "tools/heapprof/run_plan.h"

namespace heapprof::cli {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using remote::Millis;

constexpr int64_t kDefaultWindowNs = 2'000'000'000;
constexpr uint64_t kDefaultWarmupRequests = 200;
constexpr Millis kStartTimeout{20000};
// --request-timeout 0 (no limit): the client still needs a deadline for its socket.
constexpr Millis kNoTimeout{24 * 3600 * 1000};

// The flags only the embedded host can honour, refused with the reason.
Status RefuseEmbeddedOnly(const RunArgs& args) {
  auto refuse = [](const std::string& flag, const std::string& why) {
    return Error(ErrorCode::kInvalidArgument, fmt::format("{} does not work with --runtime workerd: {}", flag, why));
  };
  if (args.replicas != 1) return refuse("--replicas", "workerd runs one isolate per worker here");
  if (!args.profile_target.empty()) return refuse("--profile", "there are no replicas to pick from");
  if (args.from_start) {
    return refuse("--from-start", "the DevTools protocol can only attach once workerd has loaded the worker");
  }
  if (std::string e = PushFlagsWithoutPush(args.push); !e.empty()) return Error(ErrorCode::kInvalidArgument, e);
  if (!args.push.url.empty()) {
    return refuse("--push", "it pushes the windows of --continuous; start workerd with its inspector "
                            "(--inspector-addr) and run heapprof attach HOST:PORT --continuous D --push URL");
  }
  if (args.continuous_ns) {
    return refuse("--continuous", "start workerd with its inspector (--inspector-addr) and run heapprof attach "
                                  "HOST:PORT --continuous D");
  }
  if (!args.on_heap_limit.empty()) {
    return refuse("--on-heap-limit", "the near-heap-limit hook needs the embedded host's V8 API");
  }
  if (args.heap_limit_bytes && *args.heap_limit_bytes != kDefaultHeapLimitBytes) {
    return refuse("--heap-limit", "workerd sets its own limit");
  }
  if (args.depth != 64) return refuse("--depth", "V8's inspector always records 128 frames");
  if (!args.fetch_handler.empty()) {
    return refuse("--fetch-handler", "workerd makes the worker's subrequests itself, over its own network");
  }
  return Status::Ok();
}

// workerd: --workerd, $HEAPPROF_WORKERD, the project's .deps/workerd, or PATH.
std::string FindWorkerd(const std::string& flag) {
  if (!flag.empty()) return flag;
  if (const char* env = std::getenv("HEAPPROF_WORKERD"); env != nullptr && *env != '\0') return env;
  std::error_code ec;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  for (fs::path dir = exe.parent_path(); !ec && !dir.empty() && dir != dir.root_path(); dir = dir.parent_path()) {
    fs::path candidate = dir / ".deps/workerd/bin/workerd";
    if (access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  if (const char* path = std::getenv("PATH"); path != nullptr) {
    std::string_view rest(path);
    while (!rest.empty()) {
      size_t colon = rest.find(':');
      fs::path candidate = fs::path(std::string(rest.substr(0, colon))) / "workerd";
      if (access(candidate.c_str(), X_OK) == 0) return candidate.string();
      rest = colon == std::string_view::npos ? std::string_view() : rest.substr(colon + 1);
    }
  }
  return ".deps/workerd/bin/workerd";
}

// HTTP header names compare and record in lower case, as Headers iterates them.
std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Sends the run's requests one after another on a thread of its own, as the
// embedded engine does: the user's (--requests-file, --url) replayed in order
// and cycled, else heapprof's synthetic stream; request i is traffic[i % n].
// It keeps the outcomes, counted as the embedded engine counts them, and with
// --responses-out the records of every response in order.
class LoadDriver {
 public:
  struct Options {
    remote::HostPort server;
    std::vector<WorkerRequest> traffic;  // empty: the synthetic stream
    Millis timeout{0};                   // the client gives up and counts the request as timed out
    bool record = false;                 // keep ResponseRecord lines
  };
  explicit LoadDriver(Options options) : o_(std::move(options)) {}
  ~LoadDriver() { Stop(); }

  void Start() {
    thread_ = std::thread([this] {
      while (!stop_.load()) {
        if (sent_.load() < limit_.load()) {
          Send(sent_.fetch_add(1));
        } else {
          std::this_thread::sleep_for(std::chrono::milliseconds(1));  // waiting for the next window's share
        }
      }
    });
  }
  // With --requests the thread sends only a window's share, then waits until
  // the window has seen it.
  void Limit(uint64_t sent) { limit_.store(sent); }
  void Allow(uint64_t more) { limit_.store(sent_.load() + more); }
  void Stop() {
    stop_.store(true);
    if (thread_.joinable()) thread_.join();
  }
  // Serves `n` requests on this thread (the warm-up).
  void Serve(uint64_t n) {
    for (uint64_t i = 0; i < n && InterruptWatcher::received() == 0; ++i) Send(sent_.fetch_add(1));
  }
  uint64_t answered() {
    std::lock_guard lock(mu_);
    return outcomes_.requests();
  }
  RequestOutcomes outcomes() {
    std::lock_guard lock(mu_);
    return outcomes_;
  }
  uint64_t empty_bodies() {
    std::lock_guard lock(mu_);
    return empty_;
  }
  std::vector<std::string> first_errors() {
    std::lock_guard lock(mu_);
    return errors_;
  }
  std::string responses() {
    std::lock_guard lock(mu_);
    return responses_;
  }

 private:
  void Send(uint64_t index) {
    const WorkerRequest request = o_.traffic.empty() ? SyntheticRequest(index) : o_.traffic[index % o_.traffic.size()];
    remote::HttpRequest http;
    http.method = request.method;
    // workerd's socket is proxy style: the absolute URL on the request line is
    // the worker's request.url, scheme included, as the embedded host gives it.
    http.target = request.url;
    http.headers = request.headers;
    const bool has_host = std::any_of(http.headers.begin(), http.headers.end(),
                                      [](const auto& h) { return Lower(h.first) == "host"; });
    if (!has_host) {
      std::string_view url = request.url;
      size_t scheme = url.find("://");
      std::string_view rest = scheme == std::string_view::npos ? url : url.substr(scheme + 3);
      std::string_view host = rest.substr(0, rest.find_first_of("/?#"));
      if (!host.empty()) http.headers.emplace_back("host", std::string(host));
    }
    http.body = request.body;
    Result<remote::HttpResponse> response = remote::SendHttp(o_.server, http, o_.timeout);
    if (InterruptWatcher::received() != 0 && !response.ok()) return;  // cut short by Ctrl-C: not counted
    const bool timed_out = !response.ok() && response.status().code() == ErrorCode::kDeadlineExceeded;
    const std::string timeout_message = fmt::format("no response within --request-timeout {} ms", o_.timeout.count());
    std::lock_guard lock(mu_);
    if (o_.record) {
      Result<WorkerResponse> answer = [&]() -> Result<WorkerResponse> {
        if (timed_out) return Error(ErrorCode::kDeadlineExceeded, timeout_message);
        if (!response.ok()) return response.status();
        WorkerResponse r;
        r.status = response->status;
        for (const auto& [name, value] : response->headers) r.headers.emplace_back(Lower(name), value);
        r.body = response->body;
        return r;
      }();
      responses_ += ResponseRecord(index, request, answer);
      responses_ += '\n';
    }
    if (!response.ok()) {
      // workerd answers a handler that throws or rejects with a 500; no
      // answer at all is a timeout (ours) or workerd dropping the connection.
      outcomes_.AddFailure(timed_out ? RequestFailure::kTimedOut : RequestFailure::kThrown,
                           timed_out ? timeout_message : "no response: " + response.status().message());
      if (errors_.size() < 3) errors_.push_back(request.method + " " + request.url + ": " + response.status().message());
      return;
    }
    outcomes_.AddResponse(response->status);
    if (response->body.empty()) ++empty_;
    if (response->status >= 400 && errors_.size() < 3) {
      errors_.push_back(fmt::format("{} {} -> {}: {}", request.method, request.url, response->status,
                                    response->body.substr(0, 200)));
    }
  }

  const Options o_;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> sent_{0};
  std::atomic<uint64_t> limit_{std::numeric_limits<uint64_t>::max()};
  std::thread thread_;
  std::mutex mu_;
  RequestOutcomes outcomes_;
  uint64_t empty_ = 0;
  std::vector<std::string> errors_;
  std::string responses_;
};

// "by status: 200 x3051, 404 x3", as the embedded runtime's report writes
// it, then what else the requests came to, each count saying what it counts.
std::string Histogram(const std::map<int, uint64_t>& statuses) {
  std::string out;
  for (const auto& [status, count] : statuses) {
    out += fmt::format("{}{} x{}", out.empty() ? "" : ", ", status, count);
  }
  return "by status: " + (out.empty() ? std::string("none") : out);
}

std::string Plural(uint64_t n, const char* one, const char* many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

}  // namespace

int RunInWorkerd(const RunArgs& args, const WorkerConfig& config) {
  if (Status s = RefuseEmbeddedOnly(args); !s.ok()) return UsageError("run", s.message());
  Result<remote::RemoteSampleTypes> types = remote::ParseSampleTypes(args.sample_types);
  if (!types.ok()) return UsageError("run", types.status().message());
  if (Result<std::vector<int>> indexes = TableIndexes(args.sample_index); !indexes.ok()) {
    return UsageError("run", indexes.status().message());
  }
  // auto: as the embedded host chooses it for the platform's 128 MB limit, which workerd's isolates share.
  const uint64_t interval =
      args.interval_bytes.value_or(static_cast<uint64_t>(AutoInterval(kDefaultHeapLimitBytes)));
  uint64_t warmup_requests = args.warmup ? args.warmup->requests : kDefaultWarmupRequests;
  const int64_t warmup_ns = args.warmup ? args.warmup->ns : 0;
  const int windows = types.value() == remote::RemoteSampleTypes::kBoth ? 2 : 1;
  // --requests N, warm-up included, as in the embedded runtime: the windows
  // share what the warm-up leaves, each ending once it has seen its share
  // (or its time is up, with --window or --duration too).
  uint64_t window_requests = 0;
  if (args.requests > 0) {
    const uint64_t n = static_cast<uint64_t>(args.requests);
    if (warmup_ns > 0) {
      return UsageError("run", "with --runtime workerd, --requests counts the warm-up in requests: give --warmup "
                               "as a number of requests");
    }
    if (warmup_requests >= n) {
      if (args.warmup) {
        return UsageError("run", fmt::format("the warm-up ({} requests) leaves nothing to profile within --requests {}",
                                             warmup_requests, n));
      }
      warmup_requests = n / 10;  // a short run: keep most of it in the windows
    }
    window_requests = (n - warmup_requests) / windows;
    if (window_requests == 0) {
      return UsageError("run", fmt::format("--requests {} leaves no request for each of the {} windows after the "
                                           "warm-up of {}", n, windows, warmup_requests));
    }
  }
  int64_t window_ns = kDefaultWindowNs;
  if (args.window_ns) {
    window_ns = *args.window_ns;
  } else if (args.duration_ns) {
    window_ns = (*args.duration_ns - warmup_ns) / windows;
  } else if (window_requests > 0) {
    window_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(kNoTimeout).count();  // the count ends it
  }
  if (window_ns <= 0) return UsageError("run", "the window must be longer than 0 (check --window, --duration, --warmup)");
  Result<std::vector<WorkerRequest>> traffic = TrafficFromFlags(args);
  if (!traffic.ok()) return UsageError("run", traffic.status().message());
  const double max_failures = args.max_failures.value_or(0.5);
  const std::chrono::milliseconds request_timeout = args.request_timeout.value_or(kDefaultRequestTimeout);
  const std::string output = args.output.empty() ? fs::path(args.worker).stem().string() + ".pb.gz" : args.output;
  if (!fs::is_regular_file(args.worker)) {
    return Fail("run", fs::exists(args.worker) ? args.worker + " is not a file" : "no such worker file: " + args.worker);
  }
  std::vector<std::string> inputs = {args.worker};
  if (!args.requests_file.empty()) inputs.push_back(args.requests_file);
  if (Status s = CheckOutputs(inputs, {output, args.flamegraph, args.responses_out}); !s.ok()) return Fail("run", s);
  if (Status s = CheckFallbackDir(args.fallback_dir); !s.ok()) return Fail("run", s);
  if (!args.requests_file.empty()) {
    Result<std::vector<WorkerRequest>> read = ReadRequestsFile(args.requests_file);
    if (!read.ok()) return Fail("run", read.status());
    traffic = std::move(read);
  }

  InterruptWatcher interrupts([] {});
  remote::WorkerdSpec spec;
  spec.binary = FindWorkerd(args.workerd);
  spec.worker = args.worker;
  if (!config.compatibility_date.empty()) spec.compatibility_date = config.compatibility_date;
  spec.compatibility_flags = config.compatibility_flags;
  spec.bindings = remote::WorkerdBindings(config);
  if (!args.allow_inlining) spec.v8_flags = NoInliningFlags();
  spec.v8_flags.insert(spec.v8_flags.end(), args.v8_flags.begin(), args.v8_flags.end());
  Result<remote::WorkerdProcess> started = remote::WorkerdProcess::Start(spec, kStartTimeout);
  if (!started.ok()) return Fail("run", started.status());
  remote::WorkerdProcess& workerd = started.value();
  // V8 names a flag it does not know on stderr; workerd passes that through.
  const std::string startup_output = workerd.Output();
  std::vector<std::string> unknown;
  for (const std::string& flag : spec.v8_flags) {
    if (startup_output.find("flag " + flag) != std::string::npos ||
        startup_output.find("flag \"" + flag) != std::string::npos) {
      unknown.push_back(flag);
    }
  }
  for (const std::string& flag : args.v8_flags) {
    if (std::find(unknown.begin(), unknown.end(), flag) != unknown.end()) {
      return Fail("run", "workerd's V8 does not know the flag " + flag);
    }
  }
  int inlining = args.allow_inlining ? 1 : std::find(unknown.begin(), unknown.end(), "--no-turbo-inlining") == unknown.end() ? 0 : 1;

  LoadDriver load({.server = workerd.http(),
                   .traffic = std::move(traffic).value(),
                   .timeout = request_timeout.count() == 0 ? kNoTimeout : Millis(request_timeout.count()),
                   .record = !args.responses_out.empty()});
  if (window_requests > 0) load.Limit(0);  // after the warm-up, only the windows' shares
  const Clock::time_point start = Clock::now();
  load.Serve(warmup_requests);
  load.Start();
  while (warmup_ns > 0 && Clock::now() - start < std::chrono::nanoseconds(warmup_ns) && InterruptWatcher::received() == 0) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const uint64_t warmed = load.answered();
  if (InterruptWatcher::received() != 0) {
    load.Stop();
    Fail("run", fmt::format("interrupted by {} during the warm-up; no profile written", SignalName(InterruptWatcher::received())));
    return InterruptedExitCode(InterruptWatcher::received());
  }

  Result<remote::DevToolsSession> session = [&]() -> Result<remote::DevToolsSession> {
    Result<std::vector<remote::InspectorTarget>> targets = remote::ListTargets(workerd.inspector(), Millis(5000));
    if (!targets.ok()) return targets.status();
    if (targets->empty() || targets->front().websocket_url.empty()) {
      return Error(ErrorCode::kUnavailable, "workerd's inspector lists no worker");
    }
    return remote::DevToolsSession::Connect(targets->front().websocket_url, Millis(5000));
  }();
  if (!session.ok()) return Fail("run", session.status());

  remote::RemoteWindowOptions options;
  options.interval_bytes = interval;
  options.window = std::chrono::nanoseconds(window_ns);
  options.types = types.value();
  options.gc_before_inuse = !args.no_gc;
  options.stop = [] { return InterruptWatcher::received() != 0; };
  uint64_t window_opened_at = 0;
  if (window_requests > 0) {
    options.window_full = [&] {
      if (load.answered() - window_opened_at < window_requests) return false;
      // workerd's inspector answers the protocol's commands (stopSampling, the
      // GC before the in-use snapshot) only while its isolate has work: the
      // load goes on between windows, uncounted in the windows' shares.
      load.Limit(std::numeric_limits<uint64_t>::max());
      return true;
    };
  }
  options.on_window = [&](std::string_view kind) {
    window_opened_at = load.answered();
    if (window_requests > 0) load.Allow(window_requests);
    const std::string length = window_requests == 0 ? fmt::format("{:.2f} s", static_cast<double>(window_ns) / 1e9)
                               : args.window_ns || args.duration_ns
                                   ? fmt::format("{} requests or {:.2f} s", window_requests, static_cast<double>(window_ns) / 1e9)
                                   : fmt::format("{} requests", window_requests);
    fmt::print(stderr, "heapprof run: {} window open for {} in workerd\n", kind == "inuse" ? "in-use" : "allocation", length);
  };
  options.target_name = fs::path(args.worker).filename().string();
  options.runtime = "workerd";
  if (Result<std::string> version = remote::InspectorVersion(workerd.inspector(), Millis(2000)); version.ok()) {
    options.runtime = version.value();  // "workerd"
  }
  options.inlining_allowed = inlining;
  options.notes.push_back(fmt::format("v8_flags: {} (workerd config v8Flags{})",
                                      spec.v8_flags.empty() ? std::string("none") : fmt::format("{}", fmt::join(spec.v8_flags, " ")),
                                      unknown.empty() ? ", all accepted" : "; unknown to its V8: " + fmt::format("{}", fmt::join(unknown, " "))));
  options.notes.push_back("compatibility_date: " + spec.compatibility_date);
  if (!spec.compatibility_flags.empty()) {
    options.notes.push_back(fmt::format("compatibility_flags: {}", fmt::join(spec.compatibility_flags, " ")));
  }
  Result<remote::RemoteProfile> profiled = remote::ProfileRemote(session.value(), options);
  load.Stop();
  const int64_t elapsed_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count();
  const bool workerd_alive = workerd.Running();
  const std::string workerd_output = workerd.Output();
  workerd.Stop();
  if (!profiled.ok()) {
    return Fail("run", profiled.status().message() +
                           (workerd_alive ? "" : "\nworkerd exited; its output:\n" + workerd_output) +
                           "\n(no profile written)");
  }

  const RequestOutcomes outcomes = load.outcomes();
  std::string statuses = Histogram(outcomes.statuses());
  if (outcomes.timed_out() > 0) {
    statuses += "; " + Plural(outcomes.timed_out(), "request timed out", "requests timed out");
  }
  if (outcomes.thrown() > 0) statuses += "; " + Plural(outcomes.thrown(), "request got no response", "requests got no response");
  const uint64_t total = outcomes.requests();
  Profile& profile = profiled->profile;
  profile.comments.push_back(profile.AddString(fmt::format("responses {}", statuses)));
  // workerd names the module by its file name; point the frames at the file, for the source maps.
  const std::string absolute = fs::absolute(args.worker).lexically_normal().string();
  for (std::string& s : profile.strings) {
    if (s == workerd.module_name()) s = absolute;
  }

  RemoteReport report;
  report.command = "run";
  report.output = output;
  report.fallback_dir = args.fallback_dir;
  report.flamegraph = args.flamegraph;
  report.sample_index = args.sample_index;
  report.types = types.value();
  report.gc = !args.no_gc;
  report.symbolize = !args.no_source_maps;
  const fs::path worker_dir = fs::path(args.worker).parent_path();
  report.roots = {worker_dir.empty() ? std::string(".") : worker_dir.string()};
  report.roots.insert(report.roots.end(), args.source_map_paths.begin(), args.source_map_paths.end());
  report.interval_bytes = interval;
  report.top = static_cast<size_t>(std::max(args.top, 0));
  report.user_code = args.user_code;
  report.headline = fmt::format("Profiled {} in {}: {} requests in {:.2f} s", options.target_name, options.runtime,
                                total, static_cast<double>(elapsed_ns) / 1e9);
  report.details.push_back(fmt::format("warm-up  {} requests before the first window", warmed));
  report.details.push_back(fmt::format("responses {}{}", statuses,
                                       load.empty_bodies() > 0
                                           ? "; " + Plural(load.empty_bodies(), "response had an empty body",
                                                           "responses had an empty body")
                                           : std::string()));
  report.details.push_back(fmt::format("inlining {} (workerd config v8Flags)", inlining == 0 ? "off" : "allowed"));
  report.more_samples_hint = "Profile a longer window (--window)";
  int code = ReportRemoteProfile(profile, report);
  if (std::string described = DescribeConfig(config); !described.empty()) fmt::print("\n{}\n", described);
  if (total > 0) fmt::print("\n{}", FormatOutcomes(outcomes, nullptr));
  if (outcomes.failed() > 0) {
    fmt::print(stderr, "heapprof run: {} of {} requests failed ({}); first errors:\n", outcomes.failed(), total, statuses);
    for (const std::string& e : load.first_errors()) fmt::print(stderr, "  {}\n", e);
  }
  if (!args.responses_out.empty()) {
    std::string written;
    if (!DeliverReported("run", "responses file", args.responses_out, FallbackDirs(args.fallback_dir),
                         [&](const std::string& p) { return WriteFileAtomic(p, load.responses()); }, &written)) {
      return std::max(code, int{kExitFailure});
    }
  }
  if (code != kExitOk) return code;
  if (total == 0) return Fail("run", "no request was answered: the profile is of an idle worker");
  if (FailureVerdict verdict = JudgeFailures(outcomes, max_failures); verdict.too_many) {
    return Fail("run", verdict.message + "; the profile is written all the same");
  }
  if (int signal = InterruptWatcher::received(); signal != 0) return InterruptedExitCode(signal);
  return kExitOk;
}

}  // namespace heapprof::cli
