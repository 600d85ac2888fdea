// `heapprof run WORKER --runtime workerd`. The flags that only the embedded
// host can honour are refused up front; the rest map onto workerd's config,
// the load thread and the DevTools windows of heapprof attach.
#include "tools/heapprof/run_workerd.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>

#include "heapprof/remote/http_client.h"
#include "heapprof/remote/remote_profiler.h"
#include "heapprof/remote/workerd.h"
#include "heapprof/estimate.h"
#include "heapprof/units.h"
#include "heapprof/v8/attribution.h"
#include "heapprof/v8/worker_runtime.h"
#include "tools/heapprof/commands.h"
#include "tools/heapprof/interrupt.h"
#include "tools/heapprof/outputs.h"
#include "tools/heapprof/profile_report.h"
#include "tools/heapprof/remote_report.h"

namespace heapprof::cli {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using remote::Millis;

constexpr int64_t kDefaultWindowNs = 2'000'000'000;
constexpr uint64_t kDefaultWarmupRequests = 200;
constexpr Millis kStartTimeout{20000};
constexpr Millis kRequestTimeout{30000};  // a paid plan's CPU limit, as the embedded runtime's

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
  if (args.continuous_ns) return refuse("--continuous", "use heapprof attach repeatedly");
  if (!args.on_heap_limit.empty()) {
    return refuse("--on-heap-limit", "the near-heap-limit hook needs the embedded host's V8 API");
  }
  if (args.heap_limit_bytes && *args.heap_limit_bytes != kDefaultHeapLimitBytes) {
    return refuse("--heap-limit", "workerd sets its own limit");
  }
  if (args.depth != 64) return refuse("--depth", "V8's inspector always records 128 frames");
  if (args.requests > 0) return refuse("--requests", "the windows are timed; use --window or --duration");
  // The user's traffic and failure policy are the embedded runtime's for now.
  if (!args.requests_file.empty()) return refuse("--requests-file", "workerd is driven with the synthetic requests");
  if (!args.url.empty()) return refuse("--url", "workerd is driven with the synthetic requests");
  if (!args.responses_out.empty()) {
    return refuse("--responses-out", "workerd is driven with the synthetic requests (tests/conformance records "
                                     "workerd's responses to a requests file)");
  }
  if (args.max_failures && *args.max_failures != 0.5) {
    return refuse("--max-failures", "a workerd run fails when most requests fail");
  }
  if (args.request_timeout && *args.request_timeout != kDefaultRequestTimeout) {
    return refuse("--request-timeout", "workerd enforces its own limits");
  }
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

// Sends heapprof's synthetic requests one after another on a thread of its
// own, and keeps the outcomes.
class LoadDriver {
 public:
  explicit LoadDriver(remote::HostPort server) : server_(std::move(server)) {}
  ~LoadDriver() { Stop(); }

  void Start() {
    thread_ = std::thread([this] {
      while (!stop_.load()) Send(sent_.fetch_add(1));
    });
  }
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
    uint64_t n = 0;
    for (const auto& [status, count] : statuses_) n += count;
    return n;
  }
  // "200: 3051, 404: 3" and the failures (transport errors, 4xx/5xx, empty bodies).
  std::map<int, uint64_t> statuses() {
    std::lock_guard lock(mu_);
    return statuses_;
  }
  uint64_t empty_bodies() {
    std::lock_guard lock(mu_);
    return empty_;
  }
  std::vector<std::string> first_errors() {
    std::lock_guard lock(mu_);
    return errors_;
  }

 private:
  void Send(uint64_t index) {
    WorkerRequest synthetic = SyntheticRequest(index);
    remote::HttpRequest request;
    request.method = synthetic.method;
    // The synthetic URL's path and query; its host travels in the Host header it carries.
    std::string_view url = synthetic.url;
    size_t scheme = url.find("://");
    size_t path = url.find('/', scheme == std::string_view::npos ? 0 : scheme + 3);
    request.target = path == std::string_view::npos ? "/" : std::string(url.substr(path));
    request.headers = synthetic.headers;
    request.body = synthetic.body;
    Result<remote::HttpResponse> response = remote::SendHttp(server_, request, kRequestTimeout);
    std::lock_guard lock(mu_);
    if (!response.ok()) {
      ++statuses_[0];
      if (errors_.size() < 3) errors_.push_back(response.status().message());
      return;
    }
    ++statuses_[response->status];
    if (response->body.empty()) ++empty_;
    if (response->status >= 400 && errors_.size() < 3) {
      errors_.push_back(fmt::format("{} {} -> {}: {}", request.method, request.target, response->status,
                                    response->body.substr(0, 200)));
    }
  }

  remote::HostPort server_;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> sent_{0};
  std::thread thread_;
  std::mutex mu_;
  std::map<int, uint64_t> statuses_;  // 0 = no response
  uint64_t empty_ = 0;
  std::vector<std::string> errors_;
};

std::string Histogram(const std::map<int, uint64_t>& statuses) {
  std::string out;
  for (const auto& [status, count] : statuses) {
    out += fmt::format("{}{}: {}", out.empty() ? "" : ", ", status == 0 ? std::string("no response") : std::to_string(status),
                       count);
  }
  return out.empty() ? "none" : out;
}

}  // namespace

int RunInWorkerd(const RunArgs& args) {
  if (Status s = RefuseEmbeddedOnly(args); !s.ok()) return UsageError("run", s.message());
  Result<remote::RemoteSampleTypes> types = remote::ParseSampleTypes(args.sample_types);
  if (!types.ok()) return UsageError("run", types.status().message());
  if (Result<std::vector<int>> indexes = TableIndexes(args.sample_index); !indexes.ok()) {
    return UsageError("run", indexes.status().message());
  }
  // auto: as the embedded host chooses it for the platform's 128 MB limit, which workerd's isolates share.
  const uint64_t interval =
      args.interval_bytes.value_or(static_cast<uint64_t>(AutoInterval(kDefaultHeapLimitBytes)));
  const uint64_t warmup_requests = args.warmup ? args.warmup->requests : kDefaultWarmupRequests;
  const int64_t warmup_ns = args.warmup ? args.warmup->ns : 0;
  const int windows = types.value() == remote::RemoteSampleTypes::kBoth ? 2 : 1;
  int64_t window_ns = kDefaultWindowNs;
  if (args.window_ns) {
    window_ns = *args.window_ns;
  } else if (args.duration_ns) {
    window_ns = (*args.duration_ns - warmup_ns) / windows;
  }
  if (window_ns <= 0) return UsageError("run", "the window must be longer than 0 (check --window, --duration, --warmup)");
  const std::string output = args.output.empty() ? fs::path(args.worker).stem().string() + ".pb.gz" : args.output;
  if (!fs::is_regular_file(args.worker)) {
    return Fail("run", fs::exists(args.worker) ? args.worker + " is not a file" : "no such worker file: " + args.worker);
  }
  if (Status s = CheckOutputs({args.worker}, {output, args.flamegraph}); !s.ok()) return Fail("run", s);

  InterruptWatcher interrupts([] {});
  remote::WorkerdSpec spec;
  spec.binary = FindWorkerd(args.workerd);
  spec.worker = args.worker;
  spec.compatibility_date = args.compatibility_date;
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

  LoadDriver load(workerd.http());
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
  options.on_window = [&](std::string_view kind) {
    fmt::print(stderr, "heapprof run: {} window open for {:.2f} s in workerd\n",
               kind == "inuse" ? "in-use" : "allocation", static_cast<double>(window_ns) / 1e9);
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

  const std::map<int, uint64_t> statuses = load.statuses();
  uint64_t total = 0, failed = 0;
  for (const auto& [status, count] : statuses) {
    total += count;
    if (status == 0 || status >= 400) failed += count;
  }
  Profile& profile = profiled->profile;
  profile.comments.push_back(profile.AddString(fmt::format("responses: {}", Histogram(statuses))));
  // workerd names the module by its file name; point the frames at the file, for the source maps.
  const std::string absolute = fs::absolute(args.worker).lexically_normal().string();
  for (std::string& s : profile.strings) {
    if (s == workerd.module_name()) s = absolute;
  }

  RemoteReport report;
  report.command = "run";
  report.output = output;
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
  report.headline = fmt::format("Profiled {} in {}: {} requests in {:.2f} s", options.target_name, options.runtime,
                                total, static_cast<double>(elapsed_ns) / 1e9);
  report.details.push_back(fmt::format("warm-up  {} requests before the first window", warmed));
  report.details.push_back(fmt::format("responses {}{}", Histogram(statuses),
                                       load.empty_bodies() > 0 ? fmt::format(", {} with an empty body", load.empty_bodies())
                                                               : std::string()));
  report.details.push_back(fmt::format("inlining {} (workerd config v8Flags)", inlining == 0 ? "off" : "allowed"));
  report.more_samples_hint = "Profile a longer window (--window)";
  int code = ReportRemoteProfile(profile, report);
  if (failed > 0) {
    fmt::print(stderr, "heapprof run: {} of {} requests failed ({}); first errors:\n", failed, total, Histogram(statuses));
    for (const std::string& e : load.first_errors()) fmt::print(stderr, "  {}\n", e);
  }
  if (code != kExitOk) return code;
  if (total == 0 || failed * 2 > total) {
    return Fail("run", fmt::format("most requests failed ({} of {}): the profile is of the error path", failed, total));
  }
  if (int signal = InterruptWatcher::received(); signal != 0) return InterruptedExitCode(signal);
  return kExitOk;
}

}  // namespace heapprof::cli
