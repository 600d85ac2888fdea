// Leak verdicts (heapprof/core/leaks.cpp) on synthetic snapshot series
// (heapprof/core/leak_simulation.cpp): born/died accounting by hand, the
// four verdicts on a leak, an LRU cache, a ring buffer and a cache that fills
// then stops, the projection, bad input, and the calibration of the verdicts
// and intervals over many simulated sessions (docs/statistics.md, "Growth").
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <random>

#include "heapprof/core/leak_projection.h"
#include "heapprof/core/leak_simulation.h"
#include "heapprof/core/leaks.h"
#include "heapprof/core/stack_table.h"

using namespace heapprof;

namespace {

constexpr uint64_t kMiB = 1024 * 1024;
constexpr uint64_t kLimit = 128 * kMiB;

// A leak of 1 % of the heap limit per minute in 256-byte objects.
SimSite Leak() { return {"leakSessions", SimLifetime::kLeak, 256, 0.01 * kLimit / 60 / 256, 0}; }
// An LRU cache of 5 MiB of 1 KiB entries, 200 misses a second (full after 26 s).
SimSite Lru() { return {"lruCache", SimLifetime::kLru, 1024, 200, 5 * 1024}; }
// A ring buffer of 4 MiB of 512-byte slots, 300 writes a second.
SimSite Ring() { return {"ringBuffer", SimLifetime::kRing, 512, 300, 8192}; }
// A cache of 8 MiB of 2 KiB entries that is full 36 s into the session (warm-up 120 s).
SimSite Fill() { return {"fillOnce", SimLifetime::kFill, 2048, 4096.0 / 156.0, 4096}; }

SimSessionOptions Standard() {
  SimSessionOptions o;
  o.warmup = 120;  // the LRU and the ring are full before the first snapshot
  o.seconds = 120;
  o.cadence = 5;
  return o;
}

Result<LeakReport> Track(const SimSession& session, LeakTracker& tracker, int look = 1) {
  for (size_t k = 0; k < session.snapshots.size(); ++k) {
    Status s = tracker.Add(session.snapshots[k], session.requests[k]);
    if (!s.ok()) return s;
  }
  LeakReportOptions options;
  options.look = look;
  return tracker.Report(options);
}

const LeakSite* Site(const LeakReport& report, const std::string& function) {
  for (const LeakSite& s : report.sites) {
    if (!s.frames.empty() && s.frames.front().function_name == function) return &s;
  }
  return nullptr;
}

// A snapshot by hand: samples (id, size) of function `f` at time t seconds.
RawSnapshot Hand(double t, const std::vector<std::pair<uint64_t, uint64_t>>& samples, const std::string& f = "f") {
  internal::StackTable table;
  StackId stack = table.InternStack(StackId{0}, table.InternFrame({f, "file:///a.js", 1, 1, 1}));
  RawSnapshot snap;
  for (auto [id, size] : samples) snap.samples.push_back({id, stack, size, true});
  snap.frames = table.TakeFrames();
  snap.stacks = table.TakeStacks();
  snap.info.interval_bytes = 1024;
  snap.info.start_unix_nanos = static_cast<int64_t>(t * 1e9);
  snap.info.heap_limit_bytes = 100 * kMiB;
  snap.info.heap_used_bytes = 10 * kMiB;
  return snap;
}

uint64_t Seed() {
  if (const char* s = std::getenv("HEAPPROF_SEED")) return std::strtoull(s, nullptr, 10);
  return std::random_device{}();
}

}  // namespace

TEST_CASE("born and died are the samples alive at one end only, keyed by the frames") {
  LeakTracker tracker;
  // 16-byte objects at a 1 KiB interval: weight 1024 + 8 bytes each.
  REQUIRE(tracker.Add(Hand(0, {{1, 16}, {2, 16}, {3, 16}})).ok());
  REQUIRE(tracker.Add(Hand(10, {{2, 16}, {3, 16}, {4, 16}})).ok());
  REQUIRE(tracker.Add(Hand(20, {{3, 16}, {4, 16}, {5, 16}, {6, 16}})).ok());
  Result<LeakReport> report = tracker.Report();
  REQUIRE(report.ok());
  REQUIRE(report->sites.size() == 1);
  const LeakSite& site = report->sites.front();
  const double w = 16.0 / -std::expm1(-16.0 / 1024);
  CHECK(site.whole.born.samples == 3);  // 4, 5, 6
  CHECK(site.whole.died.samples == 2);  // 1, 2
  CHECK(site.whole.bytes == Approx(w));
  CHECK(site.whole.seconds == 20);
  CHECK(site.live_end.samples == 4);
  CHECK(site.live_start.samples == 3);
  CHECK(report->middle == 1);
  CHECK(site.late.born.samples == 2);   // 5, 6
  CHECK(site.late.died.samples == 1);   // 2
  CHECK(site.early.born.samples == 1);  // 4
  CHECK(site.early.died.samples == 1);  // 1
}

TEST_CASE("sample ids that come back or change are a restarted sampler, and time and interval are checked") {
  LeakTracker tracker;
  REQUIRE(tracker.Add(Hand(0, {{1, 16}, {2, 16}})).ok());
  REQUIRE(tracker.Add(Hand(1, {{2, 16}})).ok());
  Status back = tracker.Add(Hand(2, {{1, 16}}));
  CHECK(back.code() == ErrorCode::kFailedPrecondition);
  CHECK(back.message().find("sampler restarted") != std::string::npos);

  LeakTracker other;
  REQUIRE(other.Add(Hand(5, {{1, 16}})).ok());
  CHECK(other.Add(Hand(4, {{1, 16}})).code() == ErrorCode::kInvalidArgument);
  CHECK(other.Add(Hand(6, {{1, 32}})).code() == ErrorCode::kFailedPrecondition);
  RawSnapshot changed = Hand(7, {{1, 16}});
  changed.info.interval_bytes = 2048;
  CHECK(other.Add(changed).code() == ErrorCode::kInvalidArgument);
  RawSnapshot twice = Hand(8, {{9, 16}, {9, 16}});
  CHECK(other.Add(twice).code() == ErrorCode::kInvalidArgument);
  RawSnapshot bad = Hand(9, {{10, 16}});
  bad.samples[0].stack = StackId{42};
  CHECK(other.Add(bad).code() == ErrorCode::kInvalidArgument);

  LeakTracker single;
  REQUIRE(single.Add(Hand(0, {{1, 16}})).ok());
  CHECK(single.Report().status().code() == ErrorCode::kFailedPrecondition);
}

TEST_CASE("a leak is growing, an LRU cache and a ring buffer are steady, a cache that fills then stops is bounded") {
  // Fixed seeds: the calibration below measures how often each call is made.
  for (uint64_t seed : {1u, 2u, 3u, 4u, 5u}) {
    CAPTURE(seed);
    SimSession session = SimulateLeakSession({Leak(), Lru(), Ring(), Fill()}, Standard(), seed);
    LeakTracker tracker;
    Result<LeakReport> report = Track(session, tracker);
    REQUIRE(report.ok());
    const LeakSite* leak = Site(*report, "leakSessions");
    const LeakSite* lru = Site(*report, "lruCache");
    const LeakSite* ring = Site(*report, "ringBuffer");
    const LeakSite* fill = Site(*report, "fillOnce");
    REQUIRE(leak);
    REQUIRE(lru);
    REQUIRE(ring);
    REQUIRE(fill);
    INFO(FormatLeakReport(*report, 10));
    CHECK(leak->verdict == LeakVerdict::kGrowing);
    CHECK(lru->verdict == LeakVerdict::kSteady);
    CHECK(ring->verdict == LeakVerdict::kSteady);
    CHECK(fill->verdict == LeakVerdict::kBounded);
    // The LRU holds about as much as the leak at the end: what a single window cannot tell apart.
    CHECK(lru->live_end.value == Approx(leak->live_end.value).epsilon(0.5));
    // Growing sites come first.
    CHECK(report->sites.front().verdict == LeakVerdict::kGrowing);
    // The leak's rate interval holds the true rate for these seeds (coverage is measured below).
    const double true_rate = Leak().objects_per_second * 256 * 60;
    CHECK(leak->whole.PerMinuteInterval().low <= true_rate);
    CHECK(leak->whole.PerMinuteInterval().high >= true_rate);
    // Per 1000 requests: 100 requests a second.
    REQUIRE(leak->whole.Per1000Requests().has_value());
    CHECK(*leak->whole.Per1000Requests() == Approx(leak->whole.bytes / 12.0).epsilon(0.01));
  }
}

TEST_CASE("few samples are unclear and say what would settle it") {
  // 2 KiB of live data at a 64 KiB interval: at most one sample.
  SimSite tiny{"tinyCache", SimLifetime::kLru, 64, 2, 32};
  SimSession session = SimulateLeakSession({tiny, Lru()}, Standard(), 11);
  LeakTracker tracker;
  Result<LeakReport> report = Track(session, tracker);
  REQUIRE(report.ok());
  if (const LeakSite* site = Site(*report, "tinyCache")) {
    CHECK(site->verdict == LeakVerdict::kUnclear);
    CHECK(site->reason.find("would settle it") != std::string::npos);
  }
  // A cache still filling at half the session's length and stopping just after: not known to have stopped.
  SimSite late_fill{"lateFill", SimLifetime::kFill, 1024, 8192.0 / 190.0, 8192};
  SimSession filling = SimulateLeakSession({late_fill, Lru()}, Standard(), 12);
  LeakTracker tracker2;
  Result<LeakReport> report2 = Track(filling, tracker2);
  REQUIRE(report2.ok());
  const LeakSite* site = Site(*report2, "lateFill");
  REQUIRE(site);
  INFO(FormatLeakReport(*report2, 10));
  CHECK(site->verdict != LeakVerdict::kSteady);
}

TEST_CASE("the projection gives the time to the limit from heap used, and says when it is not growing") {
  SimSessionOptions options = Standard();
  options.heap_limit_bytes = 32 * kMiB;
  options.base_heap_bytes = 4 * kMiB;
  // 2 MiB a minute of 512-byte objects: 68.27 a second, a whole number per 15 s.
  SimSite leak{"leak", SimLifetime::kLeak, 512, 1024.0 / 15.0, 0};
  options.cadence = 15;
  SimSession session = SimulateLeakSession({leak, Lru()}, options, 7);
  LeakTracker tracker;
  Result<LeakReport> report = Track(session, tracker);
  REQUIRE(report.ok());
  const LeakProjection& p = report->projection;
  INFO(p.text);
  CHECK(p.growing);
  CHECK(p.rate_from == "heap used per request at the last part's pace");
  CHECK(p.heap_limit_bytes == 32 * kMiB);
  const double left = static_cast<double>(p.heap_limit_bytes - p.heap_used_bytes);
  const double true_minutes = left / (2.0 * kMiB);
  CHECK(p.minutes_to_limit == Approx(true_minutes));
  CHECK(p.minutes_interval.low <= p.minutes_to_limit);
  CHECK(p.minutes_interval.high >= p.minutes_to_limit);
  CHECK(p.text.find("limit in ~") != std::string::npos);
  // The sampled growth of the whole heap agrees, within its (wider) interval.
  CHECK(p.growth.PerMinuteInterval().low <= 2.0 * kMiB * 1.5);

  SimSession flat = SimulateLeakSession({Lru(), Ring()}, options, 8);
  LeakTracker tracker2;
  Result<LeakReport> report2 = Track(flat, tracker2);
  REQUIRE(report2.ok());
  CHECK_FALSE(report2->projection.growing);
  CHECK(report2->projection.text.find("not growing") != std::string::npos);

  // Heap used wobbling around a slope: the interval widens with the residuals.
  LeakTracker noisy;
  std::mt19937_64 rng(5);
  std::normal_distribution<double> wobble(0, 256 * 1024);
  for (int k = 0; k < 40; ++k) {
    RawSnapshot snap = Hand(k * 5.0, {{1, 16}});
    snap.info.heap_used_bytes = static_cast<uint64_t>(20.0 * kMiB + k * 5.0 * 1024 * 1024 / 60 + wobble(rng));
    REQUIRE(noisy.Add(snap).ok());
  }
  Result<LeakReport> report3 = noisy.Report();
  REQUIRE(report3.ok());
  const LeakProjection& q = report3->projection;
  INFO(q.text);
  CHECK(q.rate_interval.low < 1.0 * kMiB);
  CHECK(q.rate_interval.high > 1.0 * kMiB);
  CHECK(q.rate_interval.high - q.rate_interval.low > 0.1 * kMiB);
}

TEST_CASE("the projection in requests and per growing site, against a limit set apart from the snapshots") {
  SimSessionOptions options = Standard();
  options.heap_limit_bytes = 32 * kMiB;
  options.base_heap_bytes = 4 * kMiB;
  options.cadence = 15;
  options.requests_per_second = 100;
  SimSite leak{"leak", SimLifetime::kLeak, 512, 1024.0 / 15.0, 0};  // 2 MiB a minute
  SimSession session = SimulateLeakSession({leak, Lru()}, options, 7);
  LeakTracker tracker;
  tracker.SetHeapLimit(24 * kMiB, "the old generation's share");
  // The projection follows the heap figure given apart (here the snapshots' own, plus 1 MiB).
  for (size_t k = 0; k < session.snapshots.size(); ++k) {
    REQUIRE(
        tracker.Add(session.snapshots[k], session.requests[k], session.snapshots[k].info.heap_used_bytes + kMiB).ok());
  }
  Result<LeakReport> report = tracker.Report();
  REQUIRE(report.ok());
  const LeakProjection& p = report->projection;
  INFO(p.text);
  CHECK(p.heap_limit_bytes == 24 * kMiB);
  CHECK(p.heap_used_bytes == session.snapshots.back().info.heap_used_bytes + kMiB);
  CHECK(p.text.find("(the old generation's share)") != std::string::npos);
  const double left = static_cast<double>(p.heap_limit_bytes - p.heap_used_bytes);
  CHECK(p.minutes_to_limit == Approx(left / (2.0 * kMiB)));
  // 2 MiB a minute at 100 requests a second: 2 MiB per 6000 requests.
  REQUIRE(p.per_1000_requests.has_value());
  CHECK(*p.per_1000_requests == Approx(2.0 * kMiB / 6.0));
  REQUIRE(p.requests_to_limit.has_value());
  CHECK(*p.requests_to_limit == Approx(left / (2.0 * kMiB) * 6000));
  CHECK(p.requests_interval.low <= *p.requests_to_limit);
  CHECK(p.requests_interval.high >= *p.requests_to_limit);
  CHECK(p.text.find("more requests (95 %:") != std::string::npos);
  // The leak alone, at its sampled rate: its interval holds the true time to the limit.
  const LeakSite* site = Site(report.value(), "leak");
  REQUIRE(site != nullptr);
  REQUIRE(site->verdict == LeakVerdict::kGrowing);
  REQUIRE(site->minutes_to_limit.has_value());
  CHECK(site->minutes_interval.low <= left / (2.0 * kMiB));
  CHECK(site->minutes_interval.high >= left / (2.0 * kMiB));
  REQUIRE(site->requests_to_limit.has_value());
  CHECK(FormatLeakReport(report.value()).find("alone it fills the limit in ~") != std::string::npos);
  // A site that does not grow gets no projection.
  const LeakSite* cache = Site(report.value(), "lruCache");
  REQUIRE(cache != nullptr);
  CHECK_FALSE(cache->minutes_to_limit.has_value());
  nlohmann::json j = nlohmann::json::parse(LeakReportJson(report.value()));
  CHECK(j["projection"]["limit_source"] == "the old generation's share");
  CHECK(j["projection"]["requests_to_limit"].get<double>() == Approx(*p.requests_to_limit));
  CHECK(j["sites"][0]["minutes_to_limit"].get<double>() == Approx(*site->minutes_to_limit));
}

// A leak of 10 KiB a request (heap used wobbling by 128 KiB) whose pace
// stalls: four quick snapshots, a stall of 0.66 s, two more. Heap used
// against time cannot tell it grows (the slope's interval holds 0: how the
// projection once read a leak as "not growing" under load); against
// requests served it can, and the time to the limit carries the pace's
// uncertainty.
TEST_CASE("a leak per request under a stalling pace is projected in requests and its time from the pace") {
  const std::vector<double> ms = {-712, -500, -250, 0, 12, 24, 36, 700, 712};
  const std::vector<uint64_t> served = {200, 400, 600, 1000, 1040, 1080, 1120, 1160, 1200};
  LeakTracker tracker;
  std::vector<double> minutes, heap;
  for (size_t k = 0; k < ms.size(); ++k) {
    RawSnapshot snap = Hand(ms[k] / 1000, {{1, 16}});
    const double wobble = (k + 1) % 2 == 0 ? -128 * 1024 : 128 * 1024;
    snap.info.heap_used_bytes = static_cast<uint64_t>(20.0 * kMiB + 10240.0 * static_cast<double>(served[k]) + wobble);
    REQUIRE(tracker.Add(snap, served[k]).ok());
    if (ms[k] >= 0) {
      minutes.push_back(ms[k] / 60e3);
      heap.push_back(static_cast<double>(snap.info.heap_used_bytes));
    }
  }
  Result<LeakReport> report = tracker.Report();
  REQUIRE(report.ok());
  const LeakProjection& p = report->projection;
  INFO(p.text);
  REQUIRE(report->middle == 3);  // the last part is the six snapshots from 0 ms
  auto in_time = internal::Slope(minutes, heap, kConfidence);
  REQUIRE(in_time.has_value());
  CHECK(in_time->second.low < 0);
  CHECK(p.growing);
  CHECK(p.rate_from == "heap used per request at the last part's pace");
  REQUIRE(p.requests_to_limit.has_value());
  const double truth = (100.0 * kMiB - static_cast<double>(p.heap_used_bytes)) / 10240.0;
  CHECK(p.requests_interval.low <= truth);
  CHECK(p.requests_interval.high >= truth);
  // The pace: 200 requests in 0.712 s, its interval from the stall's residuals.
  REQUIRE(p.requests_per_minute.has_value());
  CHECK(p.requests_per_minute_interval.low < 200 / 0.712 * 60);
  CHECK(p.requests_per_minute_interval.high > 200 / 0.712 * 60);
  CHECK(p.minutes_to_limit == Approx(*p.requests_to_limit / *p.requests_per_minute));
  // The time's interval holds the requests', the pace's and the scatter to
  // come (docs/statistics.md): wider than either of the first two alone. The
  // stall at the end leans towards a pace slowing as the heap grows, not
  // beyond noise: the last part's pace decides the estimate.
  const double requests_width = std::log(p.requests_interval.high / p.requests_interval.low);
  const double pace_width = std::log(p.requests_per_minute_interval.high / p.requests_per_minute_interval.low);
  const double minutes_width = std::log(p.minutes_interval.high / p.minutes_interval.low);
  CHECK(minutes_width > requests_width);
  CHECK(minutes_width > pace_width);
  CHECK(p.pace_from == "last part");
  CHECK(p.text.find("limit in ~") != std::string::npos);
  CHECK(p.text.find("requests/s") != std::string::npos);
  nlohmann::json j = nlohmann::json::parse(LeakReportJson(report.value()));
  CHECK(j["projection"]["requests_per_minute"].get<double>() == Approx(*p.requests_per_minute));

  // Pages given apart that wobble by 3 MiB (as V8 releases and reuses them)
  // around objects growing exactly: the objects decide, and the interval
  // holds where the objects reach the limit.
  LeakTracker paged;
  paged.SetHeapLimit(100 * kMiB, "the old generation's share");
  for (size_t k = 0; k < ms.size(); ++k) {
    RawSnapshot snap = Hand(ms[k] / 1000, {{1, 16}});
    snap.info.heap_used_bytes = static_cast<uint64_t>(20.0 * kMiB + 10240.0 * static_cast<double>(served[k]));
    const uint64_t pages = snap.info.heap_used_bytes + (k % 2 == 0 ? 4 : 1) * kMiB;
    REQUIRE(paged.Add(snap, served[k], pages).ok());
  }
  Result<LeakReport> paged_report = paged.Report();
  REQUIRE(paged_report.ok());
  const LeakProjection& q = paged_report->projection;
  INFO(q.text);
  CHECK(q.growing);
  CHECK(q.rate_from == "the objects' bytes per request at the last part's pace");
  REQUIRE(q.requests_to_limit.has_value());
  const double objects_truth = (100.0 * kMiB - (20.0 * kMiB + 10240.0 * 1200)) / 10240.0;
  CHECK(*q.requests_to_limit == Approx(objects_truth));
  CHECK(q.requests_interval.high == Approx(objects_truth));
  CHECK(q.requests_interval.low < objects_truth);

  // Not growing per request: said per request.
  LeakTracker flat;
  for (size_t k = 0; k < ms.size(); ++k) {
    RawSnapshot snap = Hand(ms[k] / 1000, {{1, 16}});
    snap.info.heap_used_bytes = static_cast<uint64_t>(20.0 * kMiB + (k % 2) * 4096);
    REQUIRE(flat.Add(snap, served[k]).ok());
  }
  Result<LeakReport> still = flat.Report();
  REQUIRE(still.ok());
  INFO(still->projection.text);
  CHECK_FALSE(still->projection.growing);
  CHECK(still->projection.text.find("not growing (the last 1 s:") != std::string::npos);
  CHECK(still->projection.text.find("per 1000 requests") != std::string::npos);
}

TEST_CASE("the JSON report carries the verdicts and a live series per site") {
  SimSession session = SimulateLeakSession({Leak(), Lru()}, Standard(), 3);
  LeakTracker tracker;
  Result<LeakReport> report = Track(session, tracker);
  REQUIRE(report.ok());
  nlohmann::json j = nlohmann::json::parse(LeakReportJson(*report, &tracker, 10, 200));
  REQUIRE(j["sites"].size() == report->sites.size());
  CHECK(j["sites"][0]["verdict"] == "growing");
  CHECK(j["sites"][0]["name"].get<std::string>().find("leakSessions") == 0);
  REQUIRE(j["series_unix_nanos"].size() == session.snapshots.size());
  const auto& series = j["sites"][0]["series"];
  REQUIRE(series.size() == session.snapshots.size());
  CHECK(series.back().get<double>() == Approx(report->sites[0].live_end.value));
  CHECK(series.front().get<double>() < series.back().get<double>());
  CHECK(j["projection"]["growing"].get<bool>());
  // Down-sampled to at most 10 points (+ the last).
  nlohmann::json small = nlohmann::json::parse(LeakReportJson(*report, &tracker, 1, 10));
  CHECK(small["series_unix_nanos"].size() <= 11);
  CHECK(small["sites"][1].count("series") == 0);
}

TEST_CASE("ages are bucketed so that -tagfocus=age=600: keeps what lived ten minutes") {
  CHECK(AgeBucket(0) == 1);
  CHECK(AgeBucket(9.9) == 1);
  CHECK(AgeBucket(10) == 10);
  CHECK(AgeBucket(599) == 300);
  CHECK(AgeBucket(600) == 600);
  CHECK(AgeBucket(1e9) == 86400);
  SimSession session = SimulateLeakSession({Leak()}, Standard(), 4);
  LeakTracker tracker;
  REQUIRE(Track(session, tracker).ok());
  const RawSnapshot& last = session.snapshots.back();
  std::vector<int64_t> ages = SampleAges(last, tracker);
  REQUIRE(ages.size() == last.samples.size());
  // The first snapshot's samples are 120 s old at the last one; the last snapshot's new ones under 10 s.
  CHECK(*std::max_element(ages.begin(), ages.end()) == 120);
  CHECK(*std::min_element(ages.begin(), ages.end()) == 1);
  Profile profile = BuildLeakProfile(last, tracker);
  int64_t old_bytes = 0, all = 0;
  for (const Sample& s : profile.samples) {
    all += s.values[3];
    if (profile.NumLabel(s, "age") >= 60) old_bytes += s.values[3];
  }
  CHECK(old_bytes > 0);
  CHECK(old_bytes < all);
}

TEST_CASE("each look spends a part of alpha, all of them together at most alpha") {
  double sum = 0;
  for (int k = 1; k <= 100000; ++k) sum += LookAlpha(0.01, k);
  CHECK(sum < 0.01);
  CHECK(sum > 0.0099);
  CHECK(LookAlpha(0.01, 1) == Approx(0.01 * 6 / (M_PI * M_PI)));
}

// Calibration (docs/statistics.md, "Growth"): bounded workloads over many
// sessions are called growing in <= 1 %, a leak of 1 % of the limit a minute
// is called growing within 2 simulated minutes in >= 95 %, and its rate's
// interval covers the truth in about 95 %. Thresholds sit >= 5 standard
// deviations from the rates measured (tools/bench prints them with more runs).
TEST_CASE("calibration: false growing, power within 2 minutes, coverage of the rate", "[statistics]") {
  const uint64_t seed = Seed();
  CAPTURE(seed);
  std::mt19937_64 seeds(seed);
  const int runs = 400;
  int false_growing = 0, leak_found = 0, covered = 0, runs_done = 0;
  const double true_rate = Leak().objects_per_second * 256 * 60;
  for (int r = 0; r < runs; ++r) {
    // Bounded only: no site may be called growing.
    SimSession bounded = SimulateLeakSession({Lru(), Ring(), Fill()}, Standard(), seeds());
    LeakTracker t1;
    Result<LeakReport> b = Track(bounded, t1);
    REQUIRE(b.ok());
    for (const LeakSite& s : b->sites) {
      if (s.verdict == LeakVerdict::kGrowing) {
        ++false_growing;
        break;
      }
    }
    // The leak among them, 2 minutes of traffic from its start.
    SimSessionOptions o = Standard();
    SimSession leaky = SimulateLeakSession({Leak(), Lru(), Ring(), Fill()}, o, seeds());
    LeakTracker t2;
    Result<LeakReport> l = Track(leaky, t2);
    REQUIRE(l.ok());
    const LeakSite* leak = Site(*l, "leakSessions");
    REQUIRE(leak);
    if (leak->verdict == LeakVerdict::kGrowing) ++leak_found;
    Interval rate = leak->whole.PerMinuteInterval();
    if (rate.low <= true_rate && true_rate <= rate.high) ++covered;
    ++runs_done;
  }
  const double n = runs_done;
  WARN("false growing " << false_growing << "/" << n << ", leak growing " << leak_found << "/" << n
                        << ", rate interval covered " << covered << "/" << n);
  // Measured (2026-12-01, 6 x 400 runs): false growing 0-2 (0.25 %), leak growing 393-400 (98.7 %), coverage
  // 380-387 (95.9 %).
  CHECK(false_growing <= 10);        // 2.5 %: >= 5 sd above a 0.25 % rate at 400 runs
  CHECK(leak_found >= runs * 0.96);  // >= 5 sd below ~100 %
  CHECK(covered >= runs * 0.89);     // 95 % +- 5 sd (1.1 points each at 400 runs)
  CHECK(covered <= runs * 0.995);
}
