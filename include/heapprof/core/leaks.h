// Leak verdicts from a time series of live-sample snapshots. One sampler runs
// for the whole session (no include-collected flags: V8 keeps a sample
// exactly while its object lives); every few seconds a snapshot lists every
// live sample with its V8 sample id. For an interval [a, b] between two
// snapshots and per allocation site, the samples alive at b and not at a were
// born in (a, b] and still live; those alive at a and not at b died. Growth =
// born - died is a difference of two independent weighted Poisson sums, so its
// interval is known without any snapshot-to-snapshot correlation. The tests
// behind the verdicts and their assumptions: docs/statistics.md ("Growth").
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "heapprof/core/estimate.h"
#include "heapprof/core/profile.h"
#include "heapprof/core/raw_snapshot.h"
#include "heapprof/core/status.h"
#include "heapprof/core/symbolizer.h"

namespace heapprof {

// What the verdicts decide with (docs/statistics.md, "Growth").
struct LeakOptions {
  // Family-wise chance, per look, that any site of a session whose sites do
  // not grow is called growing or bounded (all sites and both tests at once).
  double alpha = 0.01;
  // The "last part" of the interval: a site is growing only when this last
  // fraction of [a, b] still grows.
  double late_fraction = 0.5;
  // Printed intervals (growth, rates, projection).
  double confidence = kConfidence;
  // A site is steady (rather than unclear) when the upper end of its
  // growth's interval over [a, b] is at most this fraction of its live bytes.
  // 1: a steady site is known not to have doubled.
  double steady_tolerance = 1.0;
};

enum class LeakVerdict {
  kGrowing,  // the last part of the interval still grows beyond noise
  kBounded,  // grew beyond noise, then stopped (a cache filling)
  kSteady,   // no significant growth, and growth by as much as it holds is excluded
  kUnclear,  // too few samples, or grew and it is not known whether it stopped
};
const char* LeakVerdictName(LeakVerdict verdict);

// The growth of a site over one interval of snapshots.
struct Growth {
  SampledValue born;                 // sampled bytes allocated in (a, b] and alive at b
  SampledValue died;                 // sampled bytes alive at a and dead at b
  double bytes = 0;                  // born - died
  Interval interval;                 // at LeakOptions::confidence
  double p_value = 1;                // one-sided: "born exceeds died" by chance alone
  double seconds = 0;                // b - a
  std::optional<uint64_t> requests;  // requests served in (a, b], when known

  double PerMinute() const { return seconds > 0 ? bytes * 60 / seconds : 0; }
  Interval PerMinuteInterval() const;
  std::optional<double> Per1000Requests() const;
  std::optional<Interval> Per1000RequestsInterval() const;
};

// One allocation site: a stack of resolved frames (stack ids differ between snapshots).
struct LeakSite {
  std::vector<Frame> frames;  // leaf first
  SampledValue live_start;    // live at a
  SampledValue live_end;      // live at b
  Interval live_end_interval;
  Growth whole;  // over [a, b]
  Growth early;  // over [a, m]
  Growth late;   // over [m, b]
  LeakVerdict verdict = LeakVerdict::kUnclear;
  std::string reason;     // why the verdict, and for unclear what would settle it
  size_t site_index = 0;  // the tracker's site number (for LeakTracker::LiveSeries)
  // A growing site with the limit known: when this site alone, at its rate of
  // the last part, fills what is left of the limit (an upper bound of the
  // time when other sites grow too); the interval from its rate's.
  std::optional<double> minutes_to_limit;
  Interval minutes_interval;                // high = infinity when the rate's interval reaches 0
  std::optional<double> requests_to_limit;  // the same in requests served, when they are counted
  Interval requests_interval;
};

// "heap used X of the Y limit, growing Z/min ± W: limit in ~N min (95 %: A-B)".
struct LeakProjection {
  uint64_t heap_used_bytes = 0;   // at b
  uint64_t heap_limit_bytes = 0;  // 0: not known
  std::string limit_source;       // what the limit is (LeakTracker::SetHeapLimit); "" = the snapshots' own
  Growth growth;                  // sampled: every site together, over the last part [m, b]
  // The rate in time (bytes per minute). With requests counted: heap used
  // per request times the pace, each a least-squares slope over the last
  // part's snapshots (Student t on the residuals, widened for their lag-1
  // autocorrelation), the interval from both. Without: the slope of heap used
  // against time. The last part is then at least 3 snapshots (the session's
  // last 3 when its last half holds fewer); the sampled growth's for a
  // session of 2.
  double rate_per_minute = 0;
  Interval rate_interval;
  std::string rate_from;  // "heap used per request at the last part's pace", "heap used" or "sampled growth"
  // With requests counted: heap used per request grows beyond noise; else the rate's interval is above zero.
  bool growing = false;
  double minutes_to_limit = 0;  // when growing and the limit is known
  // With requests counted: the requests left over the pace (pace_from), a
  // prediction interval holding the requests', the pace's and the scatter
  // to come; else from the rate's.
  Interval minutes_interval;
  // Heap used against requests served over the last part's snapshots, when
  // every one of them counted its requests: a leak per request reaches the
  // limit after this many more requests whatever the traffic's pace.
  std::optional<double> per_1000_requests;  // bytes per 1000 requests
  Interval per_1000_requests_interval;
  std::optional<double> requests_to_limit;  // when growing per request and the limit is known
  Interval requests_interval;               // high = infinity when the rate's interval reaches 0
  // The pace: requests served against time over the last part's snapshots
  // (with 5 snapshots or more: its requests over its seconds, the interval
  // from the session's scatter).
  std::optional<double> requests_per_minute;
  Interval requests_per_minute_interval;
  // What paces the minutes of a leak per request: "trend" (seconds per
  // request against heap used over the session's snapshots, slowing beyond
  // noise), "last part" (the pace above: no trend beyond noise) or "too few
  // snapshots" (the pace above, no trend fitted); "" without requests.
  // Either way but the last the interval holds the pace's scatter to come.
  std::string pace_from;
  std::optional<double> seconds_per_request;          // the trend's, at heap used now
  std::optional<double> seconds_per_request_per_mib;  // the trend: per MiB of heap
  Interval seconds_per_request_per_mib_interval;
  // The minutes at the last part's pace alone, neither trend nor scatter (as
  // projected before the trend): kept to compare against.
  std::optional<double> minutes_at_last_pace;
  Interval minutes_at_last_pace_interval;
  std::string text;
};

// The report over snapshots [first, last] of a tracker.
struct LeakReport {
  size_t first = 0, middle = 0, last = 0;  // snapshot indices a, m, b
  size_t snapshots = 0;                    // held by the tracker
  int64_t start_unix_nanos = 0, end_unix_nanos = 0;
  std::optional<uint64_t> requests;  // served in [a, b], when known
  uint64_t interval_bytes = 0;
  uint64_t live_samples = 0;  // at b
  int look = 1;               // which look this is (docs/statistics.md: multiple looks)
  double alpha = 0;           // family-wise level of this look
  double alpha_per_test = 0;  // after Tarone's correction over `tests` hypotheses
  size_t tests = 0;
  std::vector<LeakSite> sites;  // growing first, then by live bytes at b
  LeakProjection projection;
};

struct LeakReportOptions {
  std::optional<size_t> first, last;  // default: the whole session
  // Which look at the session this is: 1 for a report at its end only; a live
  // session that shows verdicts as it goes counts its looks (LookSchedule).
  int look = 1;
};

// What one look spends of the family-wise alpha: alpha * 6 / (pi^2 k^2), so
// that all looks of a session together spend at most alpha.
double LookAlpha(double alpha, int look);

// Ingests live snapshots in time order and answers for any interval of them.
// Memory: one small record per sample ever seen live, plus one per snapshot.
class LeakTracker {
 public:
  explicit LeakTracker(LeakOptions options = {});

  // Adds the next snapshot: every live sample (RawSample::live is not looked
  // at), info.start_unix_nanos its wall time, info.heap_used_bytes /
  // heap_limit_bytes, info.interval_bytes. `requests` = requests served so
  // far, when known. kInvalidArgument when time goes backwards or the
  // interval changes; kFailedPrecondition when a sample id comes back with
  // another size or site, or after it died (the sampler restarted: start a
  // new tracker).
  Status Add(const RawSnapshot& snapshot, std::optional<uint64_t> requests = std::nullopt);
  // The same, with the heap figure the projection follows given apart (e.g.
  // the old generation's committed bytes, which is what reaches V8's limit)
  // instead of info.heap_used_bytes. The projection's intervals then also
  // hold where heap used (the objects) would reach the limit: the limit
  // bites between the two.
  Status Add(const RawSnapshot& snapshot, std::optional<uint64_t> requests, uint64_t heap_used_bytes);

  // The limit the projection aims at instead of the snapshots'
  // heap_limit_bytes, and what it is (e.g. "V8's old generation under the
  // 128 MiB heap limit": where the isolate runs out of memory).
  void SetHeapLimit(uint64_t bytes, std::string source);

  size_t snapshots() const { return snapshots_.size(); }
  const LeakOptions& options() const { return options_; }

  // Needs at least two snapshots.
  Result<LeakReport> Report(const LeakReportOptions& options = {}) const;

  // Live sampled bytes of a site at each snapshot (index = snapshot).
  std::vector<double> LiveSeries(size_t site_index) const;
  // Wall time of each snapshot (unix nanos).
  std::vector<int64_t> SnapshotTimes() const;
  // Wall time of the first snapshot that saw sample `id` alive; empty when unknown.
  std::optional<int64_t> FirstSeen(uint64_t sample_id) const;

 private:
  struct SampleRecord {
    uint32_t site = 0;
    uint32_t first = 0;  // first snapshot that saw it
    uint32_t last = 0;   // last snapshot that saw it
    uint64_t size = 0;
  };
  struct SnapshotRecord {
    int64_t unix_nanos = 0;
    std::optional<uint64_t> requests;
    uint64_t heap_used = 0;  // what the projection follows (Add's heap_used_bytes)
    uint64_t heap_limit = 0;
    uint64_t live_samples = 0;
    uint64_t heap_objects = 0;  // info.heap_used_bytes
  };

  double Weight(uint64_t size) const;
  double Variance(uint64_t size) const;

  LeakOptions options_;
  uint64_t interval_ = 0;
  uint64_t limit_override_ = 0;  // SetHeapLimit; 0 = the snapshots' own
  std::string limit_source_;
  std::vector<SnapshotRecord> snapshots_;
  std::vector<std::vector<Frame>> sites_;  // leaf first
  std::unordered_map<std::string, uint32_t> site_ids_;
  std::unordered_map<uint64_t, SampleRecord> samples_;
};

// The report as text for a terminal: the projection, then one line per site
// (at most `top` sites, growing and bounded ones always shown).
std::string FormatLeakReport(const LeakReport& report, size_t top = 10);

// The report as JSON (every site), with the live series of the first
// `series_sites` sites at most `series_points` snapshots (for the page's chart).
std::string LeakReportJson(const LeakReport& report, const LeakTracker* tracker = nullptr, size_t series_sites = 10,
                           size_t series_points = 200);

// Names every site's frames by their original source, line and function
// where the source maps have them (the symbolizer the profile tables use:
// Symbolize), so growing sites read as the tables do; frames without a map
// stay as V8 named them. Call before formatting the report.
SymbolizeResult SymbolizeLeakReport(LeakReport& report, SourceMapProvider& provider);

// The "age" label's buckets, in seconds: the largest of 10, 30, 60, 120,
// 300, 600, 1200, 1800, 3600, 7200, 14400, 28800, 86400 at or below
// `seconds`, and 1 for anything younger than 10 s (pprof drops a label of
// 0), so `go tool pprof -tagfocus=age=600:` keeps what lived 10 minutes.
int64_t AgeBucket(double seconds);

// Each sample's age bucket (for BuildProfile's "age" label): the time from
// the first snapshot of `tracker` that saw it alive to `snapshot`'s time (a
// lower bound of its age: it was born at most one cadence earlier). Samples
// the tracker never saw get age 0.
std::vector<int64_t> SampleAges(const RawSnapshot& snapshot, const LeakTracker& tracker);

// The in-use profile of a leak session's last snapshot (BuildProfile), each
// sample labelled with its age bucket.
Profile BuildLeakProfile(const RawSnapshot& last, const LeakTracker& tracker);

// The cadence at which live snapshots cost a session at most ~1 % of the
// time: 100 x one snapshot's cost, between 1 s and 60 s (run, serve and
// attach --leaks without --cadence).
inline std::chrono::nanoseconds LeakAutoCadence(std::chrono::nanoseconds snapshot_cost) {
  return std::clamp<std::chrono::nanoseconds>(snapshot_cost * 100, std::chrono::seconds(1), std::chrono::seconds(60));
}

// Bytes for people: "1.5 MiB".
std::string LeakBytesText(double bytes);

}  // namespace heapprof
