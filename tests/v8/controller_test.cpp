// The controller on real isolates running JS on their own threads, profiled
// from another thread: routing, stalls, errors, near-limit capture, continuous.
#include <sys/resource.h>
#include <v8-profiler.h>
#include <v8.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <thread>

#include <catch2/catch.hpp>

#include "heapprof/core/pprof.h"
#include "heapprof/core/profile_builder.h"
#include "heapprof/v8/controller.h"
#include "heapprof/v8/v8_host.h"
#include "profile_checks.h"

using namespace heapprof;
using namespace heapprof::testing_v8;
using namespace std::chrono_literals;

namespace {

// An isolate on its own thread, registered under `name`, running `js` (which
// may loop for a while), then pumping until told to stop, then unregistering.
class BusyIsolate {
 public:
  BusyIsolate(Controller& c, std::string name, std::string setup, std::string loop,
              std::function<void(v8::Isolate*)> before_loop = {})
      : controller_(c), name_(std::move(name)), before_loop_(std::move(before_loop)) {
    thread_ = std::thread([this, setup = std::move(setup), loop = std::move(loop)] { Main(setup, loop); });
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return registered_; });
  }
  ~BusyIsolate() { Join(); }

  void Join() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      quit_ = true;
    }
    if (thread_.joinable()) thread_.join();
  }
  // The loop's result (e.g. the longest stall it observed), once joined.
  std::string result() const { return result_; }

 private:
  void Main(const std::string& setup, const std::string& loop) {
    auto iso = Isolate::Create();
    REQUIRE(iso.ok());
    v8::Isolate::Scope scope(iso->get());
    v8::HandleScope handles(iso->get());
    REQUIRE(iso->RunScript(setup, name_ + ".js").ok());
    REQUIRE(controller_.Register(name_, iso->get()).ok());
    if (before_loop_) before_loop_(iso->get());
    {
      std::lock_guard<std::mutex> lock(mu_);
      registered_ = true;
    }
    cv_.notify_all();
    auto r = iso->RunScript(loop, name_ + "-loop.js");
    result_ = r.ok() ? r.value() : r.status().message();
    for (;;) {
      controller_.Pump(iso->get());
      std::lock_guard<std::mutex> lock(mu_);
      if (quit_) break;
    }
    iso->get()->GetHeapProfiler()->StopSamplingHeapProfiler();  // whatever before_loop_ started
    (void)controller_.Unregister(name_);
  }

  Controller& controller_;
  std::string name_;
  std::function<void(v8::Isolate*)> before_loop_;
  std::thread thread_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool registered_ = false;
  bool quit_ = false;
  std::string result_;
};

// A JS loop that allocates for `ms` milliseconds in `fn` and returns the
// longest gap it saw between iterations (the stall the profiler caused).
std::string LoopFor(int ms, const std::string& fn) {
  return "(() => { const end = Date.now() + " + std::to_string(ms) +
         "; let last = Date.now(), worst = 0;"
         " while (Date.now() < end) { " +
         fn +
         "(); const now = Date.now(); worst = Math.max(worst, now - last); last = now; }"
         " return worst; })()";
}

const char* kSetup = R"JS(
globalThis.keep = [];
function workA() { const a = []; for (let i = 0; i < 200; ++i) a.push({ i, s: 'a' + i }); keep.push(a); if (keep.length > 200) keep.shift(); }
function workB() { const b = []; for (let i = 0; i < 200; ++i) b.push([i, i]); keep.push(b); if (keep.length > 200) keep.shift(); }
)JS";

WindowRequest Req(const std::string& target, std::chrono::nanoseconds d = 300ms) {
  WindowRequest r;
  r.target = target;
  r.duration = d;
  r.options.interval_bytes = 16 * 1024;
  return r;
}

// A field of /proc/self/status in its own unit (kB, or a count).
long ProcStatus(const std::string& field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(field + ":", 0) == 0) return std::stol(line.substr(field.size() + 1));
  }
  return 0;
}

long RssKiB() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  }
  return 0;
}

}  // namespace

TEST_CASE("a busy isolate is profiled from another thread without stopping it", "[controller]") {
  REQUIRE(InitializeV8().ok());
  Controller controller;
  BusyIsolate busy(controller, "worker@v1", kSetup, LoopFor(1500, "workA"));
  auto future = controller.Profile(Req("worker@v1", 500ms));
  auto result = future.get();
  busy.Join();
  INFO(result.status().message());
  REQUIRE(result.ok());
  CHECK(HasFunction(result->profile, "workA"));
  CHECK(result->profile.Total(kAllocSpace) > 0);
  CHECK(DecodePprof(result->pprof_gzip).ok());
  // workA's samples prove the JS ran inside the window. The isolate is held
  // only for the start and stop steps (one GC and snapshot each): the longest
  // gap the loop saw is far shorter than the window it would be if the
  // profiler held the isolate throughout.
  INFO("longest stall observed by the JS loop: " << busy.result() << " ms");
  CHECK(std::stol(busy.result()) < 500);
}

TEST_CASE("requests are routed to exactly the named isolate", "[controller]") {
  REQUIRE(InitializeV8().ok());
  Controller controller;
  BusyIsolate a(controller, "object-a", kSetup, LoopFor(1200, "workA"));
  BusyIsolate b(controller, "object-b", kSetup, LoopFor(1200, "workB"));
  CHECK(controller.Targets() == std::vector<std::string>{"object-a", "object-b"});
  auto result = controller.Profile(Req("object-b")).get();
  REQUIRE(result.ok());
  CHECK(HasFunction(result->profile, "workB"));
  CHECK_FALSE(HasFunction(result->profile, "workA"));
  CHECK(result->profile.CommentValue("isolate").empty());
}

TEST_CASE("controller errors are values", "[controller]") {
  REQUIRE(InitializeV8().ok());
  Controller controller;
  SECTION("unknown target") {
    auto r = controller.Profile(Req("nobody")).get();
    REQUIRE_FALSE(r.ok());
    CHECK(r.status().code() == ErrorCode::kNotFound);
    CHECK_THAT(r.status().message(), Catch::Contains("nobody"));
  }
  SECTION("target already being profiled at another interval") {
    // (Windows at the same interval share the sampler and overlap: see below.)
    BusyIsolate busy(controller, "w", kSetup, LoopFor(1000, "workA"));
    auto first = controller.Profile(Req("w", 400ms));
    WindowRequest other = Req("w", 400ms);
    other.options.interval_bytes = 64 * 1024;
    auto second = controller.Profile(other).get();
    REQUIRE_FALSE(second.ok());
    CHECK_THAT(second.status().message(), Catch::Contains("already being profiled"));
    CHECK(first.get().ok());
  }
  SECTION("target unregistered mid-window") {
    auto busy = std::make_unique<BusyIsolate>(controller, "leaving", kSetup, LoopFor(200, "workA"));
    auto f = controller.Profile(Req("leaving", 5s));
    std::this_thread::sleep_for(400ms);
    busy.reset();  // its thread unregisters while the window is open
    auto r = f.get();
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.status().message(), Catch::Contains("unregistered"));
  }
  SECTION("controller shut down with a request in flight") {
    BusyIsolate busy(controller, "w2", kSetup, LoopFor(300, "workA"));
    auto f = controller.Profile(Req("w2", 10s));
    std::this_thread::sleep_for(200ms);
    controller.Shutdown();
    auto r = f.get();
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.status().message(), Catch::Contains("shut down"));
    CHECK_FALSE(controller.Profile(Req("w2")).get().ok());
  }
}

TEST_CASE("a sampler held by another tool is reported, and the isolate keeps running", "[controller]") {
  REQUIRE(InitializeV8().ok());
  Controller controller;
  auto busy =
      std::make_unique<BusyIsolate>(controller, "inspected", kSetup, LoopFor(600, "workA"), [](v8::Isolate* isolate) {
        // Another tool (the inspector, say) holds V8's sampler.
        REQUIRE(isolate->GetHeapProfiler()->StartSamplingHeapProfiler(1024, 8));
      });
  auto r = controller.Profile(Req("inspected", 100ms)).get();
  REQUIRE_FALSE(r.ok());
  CHECK(r.status().code() == ErrorCode::kUnavailable);
  CHECK_THAT(r.status().message(), Catch::Contains("already running"));
  busy->Join();
  CHECK_THAT(busy->result(), !Catch::Contains("rror"));  // the JS loop finished normally
}

TEST_CASE("near the heap limit the controller captures the in-use profile", "[controller]") {
  REQUIRE(InitializeV8().ok());
  Controller controller;
  IsolateOptions io;
  io.heap_limit_bytes = 32u * 1024 * 1024;
  auto iso = Isolate::Create(io);
  REQUIRE(iso.ok());
  v8::Isolate::Scope scope(iso->get());
  v8::HandleScope handles(iso->get());
  REQUIRE(iso->RunScript("const cache = []; function hoardSessions(k) { for (let i = 0; i < 1000; ++i) "
                         "cache.push({ k, i, pad: new Array(16).fill(i) }); }",
                         "hoard.js")
              .ok());
  REQUIRE(controller.Register("hoarder", iso->get()).ok());
  std::optional<Result<WindowProfile>> captured;
  std::thread::id sink_thread;
  SessionOptions so;
  so.interval_bytes = 64 * 1024;
  REQUIRE(controller
              .EnableNearHeapLimitCapture(
                  "hoarder",
                  [&](Result<WindowProfile> r) {
                    sink_thread = std::this_thread::get_id();
                    captured.emplace(std::move(r));
                  },
                  so)
              .ok());
  auto run = iso->RunScript("for (let k = 0; ; ++k) hoardSessions(k);");
  REQUIRE_FALSE(run.ok());
  CHECK(run.status().code() == ErrorCode::kResourceExhausted);  // the OOM is reported cleanly
  // Unregister returns after the capture reached the sink; it was built,
  // encoded and delivered on a controller thread, not on the isolate's.
  REQUIRE(controller.Unregister("hoarder").ok());
  REQUIRE(captured.has_value());
  CHECK(sink_thread != std::this_thread::get_id());
  REQUIRE(captured->ok());
  const Profile& p = captured->value().profile;
  CHECK(HasFunction(p, "hoardSessions"));
  CHECK(p.Total(kInuseSpace) > 8.0 * 1024 * 1024);
  CHECK(p.CommentValue("trigger") == "near heap limit");
}

TEST_CASE("continuous windows give one valid file each with flat memory", "[controller]") {
  REQUIRE(InitializeV8().ok());
  namespace fs = std::filesystem;
  fs::path dir = fs::path(HEAPPROF_BINARY_DIR) / "test-output" / "continuous";
  fs::remove_all(dir);
  fs::create_directories(dir);
  Controller controller;
  std::mutex mu;
  int delivered = 0, failed = 0;
  long rss10 = 0, rss100 = 0;
  ProfileSink files = RotatingFileSink(dir.string(), "busy", [&](const Status&) { ++failed; });
  BusyIsolate busy(controller, "busy", kSetup, LoopFor(8000, "workA"));
  WindowRequest req = Req("busy", 50ms);
  auto id = controller.StartContinuous(req, [&](Result<WindowProfile> r) {
    std::lock_guard<std::mutex> lock(mu);
    if (!r.ok()) {
      ++failed;
      return;
    }
    files(std::move(r));
    ++delivered;
    if (delivered == 10) rss10 = RssKiB();
    if (delivered == 100) rss100 = RssKiB();
  });
  REQUIRE(id.ok());
  for (int i = 0; i < 400; ++i) {
    std::this_thread::sleep_for(50ms);
    std::lock_guard<std::mutex> lock(mu);
    if (delivered >= 100) break;
  }
  controller.StopContinuous(id.value());
  busy.Join();
  controller.Shutdown();
  CHECK(failed == 0);
  REQUIRE(delivered >= 100);
  int valid = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (ReadPprofFile(entry.path().string()).ok()) ++valid;
  }
  CHECK(valid >= 100);
  WARN("RSS at window 10: " << rss10 << " KiB, at window 100: " << rss100 << " KiB");
  CHECK(rss100 < rss10 * 1.5);
}

TEST_CASE("EndWindows cuts requested windows short, and later requests run their full length", "[controller]") {
  REQUIRE(InitializeV8().ok());
  Controller controller;
  BusyIsolate one(controller, "one", kSetup, LoopFor(3000, "workA"));
  BusyIsolate rolling(controller, "rolling", kSetup, LoopFor(3000, "workB"));
  auto long_window = controller.Profile(Req("one", 10min));
  std::mutex mu;
  std::vector<Result<WindowProfile>> delivered;
  auto id = controller.StartContinuous(Req("rolling", 10min), [&](Result<WindowProfile> r) {
    std::lock_guard<std::mutex> lock(mu);
    delivered.push_back(std::move(r));
  });
  REQUIRE(id.ok());
  std::this_thread::sleep_for(300ms);
  controller.EndWindows();

  // The ten-minute window ends now with what it has (the guard only keeps a
  // broken EndWindows from hanging the suite).
  REQUIRE(long_window.wait_for(60s) == std::future_status::ready);
  Result<WindowProfile> cut = long_window.get();
  INFO(cut.status().message());
  REQUIRE(cut.ok());
  CHECK(HasFunction(cut->profile, "workA"));
  CHECK(cut->profile.duration_nanos < int64_t{60'000'000'000});
  // The continuous run delivered its partial window and ended.
  controller.StopContinuous(id.value());
  {
    std::lock_guard<std::mutex> lock(mu);
    REQUIRE(delivered.size() == 1);
    REQUIRE(delivered[0].ok());
    CHECK(HasFunction(delivered[0]->profile, "workB"));
  }

  // A window requested after the cut runs its full length.
  Result<WindowProfile> after = controller.Profile(Req("one", 400ms)).get();
  REQUIRE(after.ok());
  CHECK(after->profile.duration_nanos >= int64_t{400'000'000});
  one.Join();
  rolling.Join();
}

TEST_CASE("on the isolate's own thread, Profile then Pump opens the window now, and EndWindows(name) ends it",
          "[controller]") {
  REQUIRE(InitializeV8().ok());
  Controller controller;
  BusyIsolate other(controller, "other", kSetup, LoopFor(1500, "workB"));
  auto other_window = controller.Profile(Req("other", 10min));

  auto iso = Isolate::Create();
  REQUIRE(iso.ok());
  REQUIRE(controller.Register("self", iso.value()).ok());
  auto window = controller.Profile(Req("self", 10min));
  controller.Pump(iso.value());
  {
    v8::Isolate::Scope scope(iso->get());
    v8::HandleScope handles(iso->get());
    // The sampler is already held by the window the Pump opened.
    Result<Session> second = Session::Start(iso->get());
    CHECK(second.status().code() == ErrorCode::kFailedPrecondition);
  }
  REQUIRE(iso->RunScript(std::string(kSetup) + "for (let i = 0; i < 2000; ++i) workA();").ok());
  CHECK(controller.Profiling("self"));
  controller.EndWindows("self");
  for (int i = 0; i < 60000 && window.wait_for(0s) != std::future_status::ready; ++i) {
    controller.Pump(iso.value());
    std::this_thread::sleep_for(1ms);
  }
  REQUIRE(window.wait_for(0s) == std::future_status::ready);
  Result<WindowProfile> got = window.get();
  INFO(got.status().message());
  REQUIRE(got.ok());
  CHECK(HasFunction(got->profile, "workA"));
  // The other target's ten-minute window is still open.
  CHECK(other_window.wait_for(200ms) == std::future_status::timeout);
  CHECK(controller.Profiling("other"));
  REQUIRE(controller.Unregister("self").ok());
  controller.EndWindows("other");
  REQUIRE(other_window.wait_for(60s) == std::future_status::ready);
  CHECK(other_window.get().ok());
  other.Join();
}

TEST_CASE("a thousand on-demand windows need no more threads than one", "[controller]") {
  REQUIRE(InitializeV8().ok());
  Controller controller;
  std::atomic<bool> quit{false};
  std::atomic<bool> registered{false};
  // An isolate that runs short bursts of JS and pumps between them.
  std::thread isolate_thread([&] {
    auto iso = Isolate::Create();
    REQUIRE(iso.ok());
    REQUIRE(iso->RunScript(kSetup, "setup.js").ok());
    REQUIRE(controller.Register("busy", iso.value()).ok());
    registered = true;
    while (!quit.load()) {
      REQUIRE(iso->RunScript("for (let i = 0; i < 5; ++i) workA();", "burst.js").ok());
      controller.Pump(iso.value());
    }
    REQUIRE(controller.Unregister("busy").ok());
  });
  while (!registered.load()) std::this_thread::sleep_for(1ms);
  WindowRequest request = Req("busy", 1ms);
  request.options.gc_before_snapshot = false;
  REQUIRE(controller.Profile(request).get().ok());  // the pool and the scheduler are running now
  const long threads_before = ProcStatus("Threads");
  const long vm_before = ProcStatus("VmSize");
  long threads_max = threads_before;
  int ok = 0;
  for (int i = 0; i < 1000; ++i) {
    if (controller.Profile(request).get().ok()) ++ok;
    if (i % 50 == 0) threads_max = std::max(threads_max, ProcStatus("Threads"));
  }
  const long vm_growth_kib = ProcStatus("VmSize") - vm_before;
  quit = true;
  isolate_thread.join();
  CHECK(ok == 1000);
  INFO("threads before " << threads_before << ", at most " << threads_max << "; VmSize grew " << vm_growth_kib
                         << " KiB");
  CHECK(threads_max <= threads_before);
  // A thread per window, even one that has finished, keeps its 8 MiB stack
  // mapped until joined: 1000 of them would be about 8 GB.
  CHECK(vm_growth_kib < 256 * 1024);
}

TEST_CASE("windows on one target overlap, each answered with its own range", "[controller][sampler]") {
  REQUIRE(InitializeV8().ok());
  Controller controller;
  BusyIsolate busy(controller, "shared", kSetup, LoopFor(2000, "workA"));
  auto long_window = controller.Profile(Req("shared", 900ms));
  std::this_thread::sleep_for(300ms);
  CHECK(controller.Profiling("shared"));
  auto short_window = controller.Profile(Req("shared", 300ms));  // opens inside the long one
  Result<WindowProfile> inner = short_window.get();
  Result<WindowProfile> outer = long_window.get();
  busy.Join();
  INFO(inner.status().message() << " / " << outer.status().message());
  REQUIRE(inner.ok());
  REQUIRE(outer.ok());
  // The inner window saw the loop's allocations. (Not necessarily under
  // workA's name: 300 ms into a 2 s hot loop TurboFan may have inlined workA
  // into the loop, which on an idle machine it did in about half the runs.)
  CHECK(inner->profile.Total(kAllocSpace) > 0);
  CHECK_FALSE(inner->profile.samples.empty());
  CHECK(HasFunction(outer->profile, "workA"));
  // The inner window started later and is a part of the outer one.
  CHECK(inner->profile.time_nanos > outer->profile.time_nanos);
  CHECK(inner->profile.duration_nanos < outer->profile.duration_nanos);
  CHECK(inner->profile.Total(kAllocSpace) < outer->profile.Total(kAllocSpace));
  CHECK_FALSE(controller.Profiling("shared"));
}

TEST_CASE("a near-limit capture after a closed window sees what was allocated before that window",
          "[controller][sampler]") {
  // #36: the capture covered only the time since the last window closed.
  REQUIRE(InitializeV8().ok());
  Controller controller;
  IsolateOptions io;
  io.heap_limit_bytes = 32u * 1024 * 1024;
  auto iso = Isolate::Create(io);
  REQUIRE(iso.ok());
  v8::Isolate::Scope scope(iso->get());
  v8::HandleScope handles(iso->get());
  REQUIRE(
      iso->RunScript("const early = []; function hoardEarly() { for (let i = 0; i < 1500; ++i) "
                     "early.push(new Array(1024).fill(i)); }"
                     "const late = []; function hoardLate(k) { for (let i = 0; i < 1000; ++i) "
                     "late.push({ k, i, pad: new Array(16).fill(i) }); }"
                     "function churn() { let s = 0; for (let i = 0; i < 20000; ++i) s += [i, i].length; return s; }",
                     "hoard.js")
          .ok());
  REQUIRE(controller.Register("hoarder", iso.value()).ok());
  std::optional<Result<WindowProfile>> captured;
  SessionOptions so;
  so.interval_bytes = 64 * 1024;
  REQUIRE(controller
              .EnableNearHeapLimitCapture(
                  "hoarder", [&](Result<WindowProfile> r) { captured.emplace(std::move(r)); }, so)
              .ok());
  REQUIRE(iso->RunScript("hoardEarly()").ok());  // ~12 MiB kept
  // A debug window opens and closes (on this thread: Profile, then Pump).
  WindowRequest debug{"hoarder", std::chrono::hours(24 * 365), so};
  auto window = controller.Profile(debug);
  controller.Pump(iso.value());
  REQUIRE(iso->RunScript("churn()").ok());
  controller.EndWindows("hoarder");
  for (int i = 0; i < 60000 && window.wait_for(0s) != std::future_status::ready; ++i) {
    controller.Pump(iso.value());
    std::this_thread::sleep_for(1ms);
  }
  Result<WindowProfile> debug_profile = window.get();
  REQUIRE(debug_profile.ok());
  CHECK_FALSE(HasFunction(debug_profile->profile, "hoardEarly"));  // before the window: not its allocation
  // Then the heap fills up.
  auto run = iso->RunScript("for (let k = 0; ; ++k) hoardLate(k);");
  REQUIRE_FALSE(run.ok());
  REQUIRE(controller.Unregister("hoarder").ok());
  REQUIRE(captured.has_value());
  INFO(captured->status().message());
  REQUIRE(captured->ok());
  const Profile& p = captured->value().profile;
  CHECK(p.CommentValue("trigger") == "near heap limit");
  CHECK(HasFunction(p, "hoardLate"));
  // The capture sees what the earlier window did not cover: ~12 MiB sampled
  // at 64 KiB is ~190 samples, so 6 MiB is far beyond the sampling noise.
  REQUIRE(HasFunction(p, "hoardEarly"));
  int64_t early = 0;
  for (const Sample& s : p.samples) {
    for (LocationId id : s.locations) {
      if (p.FunctionName(id) == "hoardEarly") {
        early += s.values[kInuseSpace];
        break;
      }
    }
  }
  CHECK(early > 6 * 1024 * 1024);
  // The limit reported is the configured one, not the near-limit raise.
  CHECK(p.CommentValue("heap_limit_bytes") == std::to_string(32u * 1024 * 1024));
}

TEST_CASE("Controller::LiveSnapshot sees every live sample, before and after windows", "[controller][sampler]") {
  REQUIRE(InitializeV8().ok());
  Controller controller;
  IsolateOptions io;
  io.heap_limit_bytes = 64u * 1024 * 1024;
  auto iso = Isolate::Create(io);
  REQUIRE(iso.ok());
  REQUIRE(
      iso->RunScript(
             "const kept = []; function keepOld() { for (let i = 0; i < 400; ++i) kept.push(new Array(1024).fill(i)); }"
             "function keepNew() { for (let i = 0; i < 400; ++i) kept.push(new Array(1024).fill(i)); }",
             "live.js")
          .ok());
  REQUIRE(controller.Register("live", iso.value()).ok());
  auto pump_until = [&](auto& future) {
    for (int i = 0; i < 60000 && future.wait_for(0s) != std::future_status::ready; ++i) {
      controller.Pump(iso.value());
      std::this_thread::sleep_for(1ms);
    }
    REQUIRE(future.wait_for(0s) == std::future_status::ready);
  };
  SessionOptions so;
  so.interval_bytes = 16 * 1024;
  // The first snapshot starts the sampler: nothing older than it is sampled.
  auto first = controller.LiveSnapshot("live", true, so);
  pump_until(first);
  Result<RawSnapshot> r0 = first.get();
  REQUIRE(r0.ok());
  CHECK(r0->info.interval_bytes == 16 * 1024);
  REQUIRE(iso->RunScript("keepOld()").ok());
  auto window = controller.Profile({"live", 1ms, so});
  controller.Pump(iso.value());
  REQUIRE(iso->RunScript("keepNew()").ok());
  pump_until(window);
  REQUIRE(window.get().ok());
  auto second = controller.LiveSnapshot("live", true);
  pump_until(second);
  Result<RawSnapshot> r1 = second.get();
  REQUIRE(r1.ok());
  Profile p = BuildProfile(r1.value());
  CHECK(HasFunction(p, "keepOld"));
  CHECK(HasFunction(p, "keepNew"));
  CHECK(r1->info.isolate_name == "live");
  CHECK(r1->info.heap_limit_bytes == 64u * 1024 * 1024);
  for (const RawSample& s : r1->samples) CHECK(s.live);
  CHECK(p.Total(kInuseSpace) > 4 * 1024 * 1024);  // ~6.5 MiB kept
  auto unknown = controller.LiveSnapshot("nobody", false).get();
  CHECK(unknown.status().code() == ErrorCode::kNotFound);
  REQUIRE(controller.Unregister("live").ok());
}

TEST_CASE("a window cut by its target's unregistering answers with what it saw when asked to",
          "[controller][sampler]") {
  REQUIRE(InitializeV8().ok());
  Controller controller;
  auto busy = std::make_unique<BusyIsolate>(controller, "replica", kSetup, LoopFor(300, "workA"));
  WindowRequest partial = Req("replica", 10s);
  partial.partial_on_unregister = true;
  auto kept = controller.Profile(partial);
  auto dropped = controller.Profile(Req("replica", 10s));
  std::this_thread::sleep_for(500ms);
  busy.reset();  // its thread unregisters while both windows are open
  Result<WindowProfile> got = kept.get();
  INFO(got.status().message());
  REQUIRE(got.ok());
  CHECK(HasFunction(got->profile, "workA"));
  CHECK_THAT(got->profile.CommentValue("window_end"), Catch::Contains("unregistered"));
  Result<WindowProfile> failed = dropped.get();
  REQUIRE_FALSE(failed.ok());
  CHECK_THAT(failed.status().message(), Catch::Contains("unregistered"));
}

TEST_CASE("EndWindow(id) cuts one window short and leaves the overlapping one open", "[controller][sampler]") {
  REQUIRE(InitializeV8().ok());
  Controller controller;
  BusyIsolate busy(controller, "two", kSetup, LoopFor(1500, "workA"));
  uint64_t first_id = 0, second_id = 0;
  auto first = controller.Profile(Req("two", 10min), &first_id);
  auto second = controller.Profile(Req("two", 10min), &second_id);
  REQUIRE(first_id != 0);
  REQUIRE(second_id != first_id);
  std::this_thread::sleep_for(300ms);
  controller.EndWindow(first_id);
  REQUIRE(first.wait_for(60s) == std::future_status::ready);
  Result<WindowProfile> cut = first.get();
  REQUIRE(cut.ok());
  CHECK(HasFunction(cut->profile, "workA"));
  CHECK(second.wait_for(300ms) == std::future_status::timeout);  // still open
  CHECK(controller.Profiling("two"));
  controller.EndWindow(second_id);
  REQUIRE(second.wait_for(60s) == std::future_status::ready);
  CHECK(second.get().ok());
  controller.EndWindow(first_id);  // finished: ignored
  busy.Join();
}
