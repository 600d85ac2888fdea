// Growth per allocation site between live-sample snapshots, its interval and
// the verdicts. The statistics, their assumptions and the multiple-look
// correction: docs/statistics.md ("Growth: is it a leak?").
#include "heapprof/core/leaks.h"

#include "heapprof/core/leak_projection.h"
#include "heapprof/core/math_policy.h"
#include "heapprof/core/profile_ages.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numbers>

namespace heapprof {
namespace {

using internal::SignedBytes;

// MOVER (Zou and Donner 2008) on the two gamma intervals: the difference's
// interval recovered from each side's own asymmetric interval.
Interval DifferenceInterval(const SampledValue& born, const SampledValue& died, double unseen_weight,
                            double confidence) {
  const Interval b = ValueInterval(born, unseen_weight, confidence);
  const Interval d = ValueInterval(died, unseen_weight, confidence);
  const double g = born.value - died.value;
  const double low = g - std::hypot(born.value - b.low, d.high - died.value);
  const double high = g + std::hypot(b.high - born.value, died.value - d.low);
  return {low, high};
}

void AddSample(SampledValue& v, double weight, double variance) {
  v.value += weight;
  v.samples += 1;
  v.variance += variance;
  v.max_weight = std::max(v.max_weight, std::sqrt(std::max(0.0, variance)));
}

std::string SiteKey(const RawSnapshot& snapshot, StackId stack, std::vector<Frame>* frames) {
  std::string key;
  size_t guard = 0;
  for (uint32_t s = static_cast<uint32_t>(stack); s != 0 && guard <= snapshot.stacks.size(); ++guard) {
    const StackNode& node = snapshot.stacks[s];
    const Frame& frame = snapshot.frames[static_cast<uint32_t>(node.frame)];
    frames->push_back(frame);
    key += fmt::format("{}\x1f{}\x1f{}\x1f{}\x1e", frame.function_name, frame.script_name, frame.line, frame.column);
    s = static_cast<uint32_t>(node.parent);
  }
  return key;
}

}  // namespace

const char* LeakVerdictName(LeakVerdict verdict) {
  switch (verdict) {
    case LeakVerdict::kGrowing:
      return "growing";
    case LeakVerdict::kBounded:
      return "bounded";
    case LeakVerdict::kSteady:
      return "steady";
    case LeakVerdict::kUnclear:
      return "unclear";
  }
  return "unclear";
}

Interval Growth::PerMinuteInterval() const {
  if (seconds <= 0) return {0, 0};
  return {interval.low * 60 / seconds, interval.high * 60 / seconds};
}

std::optional<double> Growth::Per1000Requests() const {
  if (!requests || *requests == 0) return std::nullopt;
  return bytes * 1000 / static_cast<double>(*requests);
}

std::optional<Interval> Growth::Per1000RequestsInterval() const {
  if (!requests || *requests == 0) return std::nullopt;
  const double k = 1000 / static_cast<double>(*requests);
  return Interval{interval.low * k, interval.high * k};
}

double LookAlpha(double alpha, int look) {
  const double k = std::max(1, look);
  return alpha * 6 / (std::numbers::pi * std::numbers::pi * k * k);
}

std::string LeakBytesText(double bytes) {
  const double a = std::abs(bytes);
  if (a < 1024) return fmt::format("{:.0f} B", bytes);
  if (a < 1024 * 1024) return fmt::format("{:.1f} KiB", bytes / 1024);
  if (a < 1024.0 * 1024 * 1024) return fmt::format("{:.2f} MiB", bytes / (1024 * 1024));
  return fmt::format("{:.2f} GiB", bytes / (1024.0 * 1024 * 1024));
}

LeakTracker::LeakTracker(LeakOptions options) : options_(options) {}

double LeakTracker::Weight(uint64_t size) const {
  const double s = static_cast<double>(std::max<uint64_t>(size, 1));
  const double p = -std::expm1(-s / static_cast<double>(interval_));
  return s / p;
}

double LeakTracker::Variance(uint64_t size) const {
  const double s = static_cast<double>(std::max<uint64_t>(size, 1));
  const double p = -std::expm1(-s / static_cast<double>(interval_));
  const double w = s / p;
  return (1 - p) * w * w;
}

Status LeakTracker::Add(const RawSnapshot& snapshot, std::optional<uint64_t> requests) {
  return Add(snapshot, requests, snapshot.info.heap_used_bytes);
}

Status LeakTracker::Add(const RawSnapshot& snapshot, std::optional<uint64_t> requests, uint64_t heap_used_bytes) {
  const WindowInfo& info = snapshot.info;
  if (info.interval_bytes == 0)
    return Error(ErrorCode::kInvalidArgument, "a leak snapshot needs its sampling interval");
  if (interval_ == 0) interval_ = info.interval_bytes;
  if (info.interval_bytes != interval_) {
    return Error(ErrorCode::kInvalidArgument,
                 fmt::format("the sampling interval changed from {} to {} bytes within one leak session", interval_,
                             info.interval_bytes));
  }
  if (!snapshots_.empty() && info.start_unix_nanos < snapshots_.back().unix_nanos) {
    return Error(ErrorCode::kInvalidArgument, "leak snapshots must come in time order");
  }
  if (!snapshots_.empty() && requests && snapshots_.back().requests && *requests < *snapshots_.back().requests) {
    return Error(ErrorCode::kInvalidArgument, "the request count of a leak snapshot went down");
  }
  if (snapshots_.size() >= UINT32_MAX - 1) return Error(ErrorCode::kResourceExhausted, "too many leak snapshots");
  const uint32_t index = static_cast<uint32_t>(snapshots_.size());
  std::vector<int64_t> site_of_stack(snapshot.stacks.size(), -1);
  for (const RawSample& sample : snapshot.samples) {
    const uint32_t stack = static_cast<uint32_t>(sample.stack);
    if (stack >= snapshot.stacks.size() && !(stack == 0 && snapshot.stacks.empty())) {
      return Error(ErrorCode::kInvalidArgument,
                   fmt::format("sample {} names stack {} of {}", sample.sample_id, stack, snapshot.stacks.size()));
    }
    uint32_t site = 0;
    if (stack < site_of_stack.size() && site_of_stack[stack] >= 0) {
      site = static_cast<uint32_t>(site_of_stack[stack]);
    } else {
      std::vector<Frame> frames;
      size_t depth = 0;
      for (uint32_t s = stack; s != 0; ++depth) {
        const StackNode& node = snapshot.stacks[s];
        if (static_cast<uint32_t>(node.frame) >= snapshot.frames.size() ||
            static_cast<uint32_t>(node.parent) >= snapshot.stacks.size() || depth > snapshot.stacks.size()) {
          return Error(ErrorCode::kInvalidArgument, fmt::format("stack {} of a leak snapshot is malformed", stack));
        }
        s = static_cast<uint32_t>(node.parent);
      }
      std::string key = SiteKey(snapshot, sample.stack, &frames);
      auto [it, added] = site_ids_.try_emplace(std::move(key), static_cast<uint32_t>(sites_.size()));
      if (added) sites_.push_back(std::move(frames));
      site = it->second;
      if (stack < site_of_stack.size()) site_of_stack[stack] = site;
    }
    auto [it, added] = samples_.try_emplace(sample.sample_id, SampleRecord{site, index, index, sample.size});
    if (added) continue;
    SampleRecord& record = it->second;
    if (record.last == index) {
      return Error(ErrorCode::kInvalidArgument,
                   fmt::format("sample id {} appears twice in one leak snapshot", sample.sample_id));
    }
    if (record.size != sample.size || record.site != site || record.last + 1 != index) {
      return Error(ErrorCode::kFailedPrecondition,
                   fmt::format("sample id {} came back {}: the sampler restarted; a leak session needs one sampler "
                               "for its whole length",
                               sample.sample_id, record.last + 1 != index ? "after it died" : "as another allocation"));
    }
    record.last = index;
  }
  snapshots_.push_back({info.start_unix_nanos, requests, heap_used_bytes, info.heap_limit_bytes,
                        static_cast<uint64_t>(snapshot.samples.size()), info.heap_used_bytes});
  return Status::Ok();
}

Result<LeakReport> LeakTracker::Report(const LeakReportOptions& options) const {
  if (snapshots_.size() < 2) {
    return Error(ErrorCode::kFailedPrecondition,
                 fmt::format("a leak report needs two snapshots or more; the session has {}", snapshots_.size()));
  }
  const size_t a = options.first.value_or(0);
  const size_t b = options.last.value_or(snapshots_.size() - 1);
  if (a >= b || b >= snapshots_.size()) {
    return Error(ErrorCode::kInvalidArgument,
                 fmt::format("snapshots [{}, {}] are no interval of the session's {}", a, b, snapshots_.size()));
  }
  const SnapshotRecord& sa = snapshots_[a];
  const SnapshotRecord& sb = snapshots_[b];
  // The last part: from the latest snapshot at or before b - late_fraction * (b - a).
  const double fraction = std::clamp(options_.late_fraction, 0.0, 1.0);
  const double split =
      static_cast<double>(sb.unix_nanos) - fraction * static_cast<double>(sb.unix_nanos - sa.unix_nanos);
  size_t m = a;
  for (size_t k = a; k < b; ++k) {
    if (static_cast<double>(snapshots_[k].unix_nanos) <= split) m = k;
  }

  struct SiteSums {
    SampledValue live_a, live_b, born_ab, died_ab, born_am, died_am, born_mb, died_mb;
    bool present = false;
  };
  std::vector<SiteSums> sums(sites_.size());
  SampledValue all_born_late, all_died_late, all_live_b;
  double weight_sum = 0, weight_count = 0;
  for (const auto& [id, r] : samples_) {
    (void)id;
    const bool at_a = r.first <= a && a <= r.last;
    const bool at_m = r.first <= m && m <= r.last;
    const bool at_b = r.first <= b && b <= r.last;
    if (!at_a && !at_b && !at_m) continue;
    const double w = Weight(r.size), v = Variance(r.size);
    weight_sum += w;
    weight_count += 1;
    SiteSums& s = sums[r.site];
    s.present = true;
    if (at_a) AddSample(s.live_a, w, v);
    if (at_b) {
      AddSample(s.live_b, w, v);
      AddSample(all_live_b, w, v);
    }
    if (!at_a && at_b) AddSample(s.born_ab, w, v);
    if (at_a && !at_b) AddSample(s.died_ab, w, v);
    if (!at_a && at_m) AddSample(s.born_am, w, v);
    if (at_a && !at_m) AddSample(s.died_am, w, v);
    if (!at_m && at_b) {
      AddSample(s.born_mb, w, v);
      AddSample(all_born_late, w, v);
    }
    if (at_m && !at_b) {
      AddSample(s.died_mb, w, v);
      AddSample(all_died_late, w, v);
    }
  }
  const double unseen = weight_count > 0 ? weight_sum / weight_count : static_cast<double>(interval_);
  const double confidence = options_.confidence;

  auto seconds = [&](size_t x, size_t y) {
    return static_cast<double>(snapshots_[y].unix_nanos - snapshots_[x].unix_nanos) / 1e9;
  };
  auto requests = [&](size_t x, size_t y) -> std::optional<uint64_t> {
    if (!snapshots_[x].requests || !snapshots_[y].requests) return std::nullopt;
    return *snapshots_[y].requests - *snapshots_[x].requests;
  };
  auto growth = [&](const SampledValue& born, const SampledValue& died, size_t x, size_t y, double* min_p) {
    Growth g;
    g.born = born;
    g.died = died;
    g.bytes = born.value - died.value;
    g.interval = DifferenceInterval(born, died, unseen, confidence);
    OneSidedPValue test = ExcessPValue(born, unseen, died, unseen);
    g.p_value = test.p;
    if (min_p) *min_p = test.min_p;
    g.seconds = seconds(x, y);
    g.requests = requests(x, y);
    return g;
  };

  LeakReport report;
  report.first = a;
  report.middle = m;
  report.last = b;
  report.snapshots = snapshots_.size();
  report.start_unix_nanos = sa.unix_nanos;
  report.end_unix_nanos = sb.unix_nanos;
  report.requests = requests(a, b);
  report.interval_bytes = interval_;
  report.live_samples = sb.live_samples;
  report.look = std::max(1, options.look);
  report.alpha = LookAlpha(options_.alpha, report.look);

  std::vector<double> min_ps;
  for (size_t i = 0; i < sites_.size(); ++i) {
    const SiteSums& s = sums[i];
    if (!s.present || (s.live_a.samples == 0 && s.live_b.samples == 0)) continue;
    LeakSite site;
    site.frames = sites_[i];
    site.site_index = i;
    site.live_start = s.live_a;
    site.live_end = s.live_b;
    site.live_end_interval = ValueInterval(s.live_b, unseen, confidence);
    double min_whole = 1, min_late = 1;
    site.whole = growth(s.born_ab, s.died_ab, a, b, &min_whole);
    site.early = growth(s.born_am, s.died_am, a, m, nullptr);
    site.late = growth(s.born_mb, s.died_mb, m, b, &min_late);
    min_ps.push_back(min_whole);
    min_ps.push_back(min_late);
    report.sites.push_back(std::move(site));
  }

  // Tarone (1990): a test whose samples could not reach alpha/K even at
  // their most extreme does not count among the K tests.
  std::sort(min_ps.begin(), min_ps.end());
  size_t k = 1;
  for (; k < min_ps.size(); ++k) {
    const double level = report.alpha / static_cast<double>(k);
    const size_t testable = static_cast<size_t>(std::upper_bound(min_ps.begin(), min_ps.end(), level) - min_ps.begin());
    if (testable <= k) break;
  }
  report.tests = std::max<size_t>(1, std::min(k, min_ps.size()));
  report.alpha_per_test = report.alpha / static_cast<double>(report.tests);
  const double level = report.alpha_per_test;
  const double tolerance = options_.steady_tolerance;

  for (LeakSite& site : report.sites) {
    const bool grew_late = site.late.p_value <= level && site.late.bytes > 0;
    const bool grew = site.whole.p_value <= level && site.whole.bytes > 0;
    const Interval late_rate = site.late.PerMinuteInterval();
    const double early_rate = site.early.PerMinute();
    const double samples = site.whole.born.samples + site.whole.died.samples + site.live_end.samples;
    if (grew_late) {
      site.verdict = LeakVerdict::kGrowing;
      site.reason = fmt::format(
          "the last {:.0f} s grew {} (born {} in {} samples, died {} in {}; p = {:.2g}, "
          "needed <= {:.2g})",
          site.late.seconds, SignedBytes(site.late.bytes), LeakBytesText(site.late.born.value), site.late.born.samples,
          LeakBytesText(site.late.died.value), site.late.died.samples, site.late.p_value, level);
    } else if (grew && site.early.seconds > 0 && late_rate.high < early_rate) {
      site.verdict = LeakVerdict::kBounded;
      site.reason = fmt::format("grew {} in the first {:.0f} s, then at most {}/min (95 %) in the last {:.0f} s",
                                SignedBytes(site.early.bytes), site.early.seconds, LeakBytesText(late_rate.high),
                                site.late.seconds);
    } else if (grew) {
      site.verdict = LeakVerdict::kUnclear;
      site.reason = fmt::format(
          "grew {} (p = {:.2g}), but the last {:.0f} s ({} to {}/min) cannot tell whether it "
          "stopped: a longer run would settle it",
          SignedBytes(site.whole.bytes), site.whole.p_value, site.late.seconds, SignedBytes(late_rate.low),
          SignedBytes(late_rate.high));
    } else {
      const double live = std::max(site.live_start.value, site.live_end.value);
      // Equivalence on the side that matters: growth of more than `tolerance`
      // of its live bytes is excluded (a site that shrank is not a leak).
      const bool tight = live > 0 && site.whole.interval.high <= tolerance * live;
      if (tight) {
        site.verdict = LeakVerdict::kSteady;
        site.reason = fmt::format("changed {} ({} to {}): not more than {:.0f} % of its live bytes",
                                  SignedBytes(site.whole.bytes), SignedBytes(site.whole.interval.low),
                                  SignedBytes(site.whole.interval.high), tolerance * 100);
      } else {
        site.verdict = LeakVerdict::kUnclear;
        // About 20 samples of its live bytes put its growth within ~+-50 %.
        const int64_t smaller = IntervalForSamples(live, 20, 1024, static_cast<int64_t>(interval_ / 2));
        const bool can_shrink = live > 0 && interval_ >= 2048 && static_cast<double>(smaller) * 20 <= live;
        site.reason = fmt::format(
            "{:.0f} samples: its growth ({} to {}) may be more than {:.0f} % of its "
            "live bytes; {}",
            samples, SignedBytes(site.whole.interval.low), SignedBytes(site.whole.interval.high), tolerance * 100,
            can_shrink ? fmt::format("--interval {} would settle it", LeakBytesText(static_cast<double>(smaller)))
                       : "a smaller interval or a longer run would settle it");
      }
    }
  }
  auto rank = [](LeakVerdict v) {
    switch (v) {
      case LeakVerdict::kGrowing:
        return 0;
      case LeakVerdict::kBounded:
        return 1;
      case LeakVerdict::kUnclear:
        return 2;
      case LeakVerdict::kSteady:
        return 2;
    }
    return 3;
  };
  std::stable_sort(report.sites.begin(), report.sites.end(), [&](const LeakSite& x, const LeakSite& y) {
    if (rank(x.verdict) != rank(y.verdict)) return rank(x.verdict) < rank(y.verdict);
    if (x.verdict == LeakVerdict::kGrowing) return x.whole.bytes > y.whole.bytes;
    return x.live_end.value > y.live_end.value;
  });

  // The projection's slopes over the last part, at least three snapshots (the
  // fewest a slope's interval needs) when the session has them: a stall in
  // the last half of a short session leaves fewer there.
  const size_t pm = b - m >= 2 || b < a + 2 ? m : b - 2;
  internal::ProjectionInput projection;
  for (size_t j = pm; j <= b; ++j) {
    const SnapshotRecord& q = snapshots_[j];
    projection.last_part.push_back({static_cast<double>(q.unix_nanos - snapshots_[pm].unix_nanos) / 60e9, q.requests,
                                    static_cast<double>(q.heap_used), static_cast<double>(q.heap_objects)});
  }
  for (size_t j = a; j <= b; ++j) {
    const SnapshotRecord& q = snapshots_[j];
    projection.session.push_back({static_cast<double>(q.unix_nanos - snapshots_[pm].unix_nanos) / 60e9, q.requests,
                                  static_cast<double>(q.heap_used), static_cast<double>(q.heap_objects)});
  }
  projection.limit_bytes = limit_override_ > 0 ? limit_override_ : sb.heap_limit;
  projection.limit_source = limit_override_ > 0 ? limit_source_ : std::string();
  projection.sampled = growth(all_born_late, all_died_late, m, b, nullptr);  // when the session has two snapshots
  projection.confidence = confidence;
  internal::ProjectLimit(projection, report);
  return report;
}

void LeakTracker::SetHeapLimit(uint64_t bytes, std::string source) {
  limit_override_ = bytes;
  limit_source_ = std::move(source);
}

std::vector<double> LeakTracker::LiveSeries(size_t site_index) const {
  std::vector<double> diff(snapshots_.size() + 1, 0.0);
  for (const auto& [id, r] : samples_) {
    (void)id;
    if (r.site != site_index) continue;
    const double w = Weight(r.size);
    diff[r.first] += w;
    diff[r.last + 1] -= w;
  }
  std::vector<double> out(snapshots_.size(), 0.0);
  double running = 0;
  for (size_t k = 0; k < snapshots_.size(); ++k) {
    running += diff[k];
    out[k] = std::max(0.0, running);
  }
  return out;
}

std::vector<int64_t> LeakTracker::SnapshotTimes() const {
  std::vector<int64_t> out;
  out.reserve(snapshots_.size());
  for (const SnapshotRecord& s : snapshots_) out.push_back(s.unix_nanos);
  return out;
}

std::optional<int64_t> LeakTracker::FirstSeen(uint64_t sample_id) const {
  auto it = samples_.find(sample_id);
  if (it == samples_.end()) return std::nullopt;
  return snapshots_[it->second.first].unix_nanos;
}

int64_t AgeBucket(double seconds) {
  // The youngest bucket is 1, not 0: go tool pprof drops a numeric label of 0.
  static constexpr int64_t kBuckets[] = {1, 10, 30, 60, 120, 300, 600, 1200, 1800, 3600, 7200, 14400, 28800, 86400};
  int64_t out = 1;
  for (int64_t b : kBuckets) {
    if (seconds >= static_cast<double>(b)) out = b;
  }
  return out;
}

std::vector<int64_t> SampleAges(const RawSnapshot& snapshot, const LeakTracker& tracker) {
  std::vector<int64_t> ages;
  ages.reserve(snapshot.samples.size());
  for (const RawSample& sample : snapshot.samples) {
    std::optional<int64_t> first = tracker.FirstSeen(sample.sample_id);
    const double age = first ? static_cast<double>(snapshot.info.start_unix_nanos - *first) / 1e9 : 0.0;
    ages.push_back(AgeBucket(age));
  }
  return ages;
}

Profile BuildLeakProfile(const RawSnapshot& last, const LeakTracker& tracker) {
  return internal::BuildProfileWithAges(last, SampleAges(last, tracker));
}

}  // namespace heapprof
