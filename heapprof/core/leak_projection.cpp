// The projection of a leak report: the heap figure against its limit over the
// last part's snapshots, in requests served and in minutes. A leak per request
// is projected in requests (heap used against requests served) and turned into
// time with the last part's pace (requests served against time), each with its
// own interval; without request counts, heap used against time. The reasons:
// docs/statistics.md ("The projection").
#include "heapprof/core/leak_projection.h"

#include <fmt/format.h>
#include <boost/math/distributions/students_t.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

#include "heapprof/core/leak_pace.h"
#include "heapprof/core/math_policy.h"

namespace heapprof::internal {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

// What is left of the limit over a rate and its interval: the estimate and
// [left / high, left / low] (infinity when the low end is not above 0).
std::pair<double, Interval> TimeToFill(double left, double rate, const Interval& rates) {
  return {left / rate, {left / rates.high, rates.low > 0 ? left / rates.low : kInfinity}};
}

}  // namespace

std::string MinutesText(double minutes) {
  if (!std::isfinite(minutes)) return "never";
  if (minutes < 1) return fmt::format("{:.0f} s", minutes * 60);
  if (minutes < 120) return fmt::format("{:.0f} min", minutes);
  return fmt::format("{:.1f} h", minutes / 60);
}

std::string RequestsText(double requests) {
  if (!std::isfinite(requests)) return "never";
  if (requests < 1e4) return fmt::format("{:.0f}", requests);
  if (requests < 1e6) return fmt::format("{:.0f}k", requests / 1e3);
  return fmt::format("{:.1f}M", requests / 1e6);
}

std::string SignedBytes(double bytes) { return (bytes >= 0 ? "+" : "-") + LeakBytesText(std::abs(bytes)); }

std::optional<std::pair<double, Interval>> Slope(const std::vector<double>& t, const std::vector<double>& y,
                                                 double confidence) {
  const size_t n = t.size();
  if (n < 3 || y.size() != n) return std::nullopt;
  double tm = 0, ym = 0;
  for (size_t i = 0; i < n; ++i) {
    tm += t[i];
    ym += y[i];
  }
  tm /= static_cast<double>(n);
  ym /= static_cast<double>(n);
  double stt = 0, sty = 0;
  for (size_t i = 0; i < n; ++i) {
    stt += (t[i] - tm) * (t[i] - tm);
    sty += (t[i] - tm) * (y[i] - ym);
  }
  if (stt <= 0) return std::nullopt;
  const double beta = sty / stt;
  std::vector<double> r(n);
  double ss = 0;
  for (size_t i = 0; i < n; ++i) {
    r[i] = y[i] - ym - beta * (t[i] - tm);
    ss += r[i] * r[i];
  }
  // A heap's wobble (and a pace's) lasts longer than one cadence: a positive
  // lag-1 autocorrelation r of the residuals widens the error by sqrt((1 + r) / (1 - r)).
  double lag = 0;
  for (size_t i = 1; i < n; ++i) lag += r[i] * r[i - 1];
  const double rho = ss > 0 ? std::clamp(lag / ss, 0.0, 0.9) : 0.0;
  const double se = std::sqrt(ss / static_cast<double>(n - 2) / stt) * std::sqrt((1 + rho) / (1 - rho));
  const boost::math::students_t_distribution<double, NoThrow> student(static_cast<double>(n - 2));
  const double q = boost::math::quantile(student, 1 - (1 - confidence) / 2);
  return std::make_pair(beta, Interval{beta - q * se, beta + q * se});
}

void ProjectLimit(const ProjectionInput& in, LeakReport& report) {
  LeakProjection& p = report.projection;
  const ProjectionPoint& end = in.last_part.back();
  const double confidence = in.confidence;
  p.heap_used_bytes = static_cast<uint64_t>(end.heap_used);
  p.heap_limit_bytes = in.limit_bytes;
  p.limit_source = in.limit_source;
  p.growth = in.sampled;
  p.rate_per_minute = p.growth.PerMinute();
  p.rate_interval = p.growth.PerMinuteInterval();
  p.rate_from = "sampled growth";

  std::vector<double> minutes, thousands, used, objects;
  bool used_known = true, requests_known = true, apart = false;
  for (const ProjectionPoint& q : in.last_part) {
    used_known = used_known && q.heap_used > 0;
    apart = apart || q.heap_objects != q.heap_used;
    requests_known = requests_known && q.requests.has_value();
    minutes.push_back(q.minutes);
    if (requests_known) thousands.push_back(static_cast<double>(*q.requests) / 1e3);
    used.push_back(q.heap_used);
    objects.push_back(q.heap_objects);
  }
  std::optional<std::pair<double, Interval>> in_time, per_request, pace;
  if (used_known) in_time = Slope(minutes, used, confidence);
  if (in_time) {
    p.rate_per_minute = in_time->first;
    p.rate_interval = in_time->second;
    p.rate_from = "heap used";
  }
  if (used_known && requests_known) {
    per_request = Slope(thousands, used, confidence);
    pace = Slope(minutes, thousands, confidence);  // thousands of requests a minute
  }
  // Pages (a heap figure given apart) wobble by megabytes as V8 releases and
  // reuses them, more so on a loaded machine; the objects they hold do not.
  // When the pages cannot tell whether the heap grows per request and the
  // objects can, the objects decide: the pages hold at least the objects, so
  // they reach the limit no later than the objects' projection says.
  const double limit = static_cast<double>(p.heap_limit_bytes);
  const double left = p.heap_limit_bytes > 0 ? std::max(0.0, limit - end.heap_used) : 0.0;
  const double objects_left = std::max(0.0, limit - end.heap_objects);
  std::optional<std::pair<double, Interval>> by_objects;
  if (per_request && per_request->second.low <= 0 && apart && end.heap_objects > 0) {
    by_objects = Slope(thousands, objects, confidence);
    if (by_objects && by_objects->second.low <= 0) by_objects.reset();
  }
  const std::optional<std::pair<double, Interval>>& decides = by_objects ? by_objects : per_request;
  if (decides) {
    p.per_1000_requests = decides->first;
    p.per_1000_requests_interval = decides->second;
  }
  // A leak per request: whether it grows is decided per request (a pace that
  // stalls and bursts does not blur it), the time from the pace.
  const bool by_request = decides && pace && pace->first > 0;
  if (by_request) {
    p.requests_per_minute = pace->first * 1e3;
    p.requests_per_minute_interval = {pace->second.low * 1e3, pace->second.high * 1e3};
    if (decides->second.low > 0) {
      p.rate_per_minute = decides->first * pace->first;
      p.rate_interval = ProductInterval(decides->first, decides->second, pace->first, pace->second);
      p.rate_from = by_objects ? "the objects' bytes per request at the last part's pace"
                               : "heap used per request at the last part's pace";
    }
  }
  p.growing = by_request ? decides->second.low > 0 : p.rate_interval.low > 0;

  if (p.heap_limit_bytes > 0 && decides && decides->second.low > 0) {
    auto [estimate, interval] = TimeToFill(by_objects ? objects_left : left, decides->first, decides->second);
    // The pages' own fastest growth still bounds how soon they fill.
    if (by_objects && per_request->second.high > 0)
      interval.low = std::min(interval.low, left / per_request->second.high);
    p.requests_to_limit = estimate * 1e3;
    p.requests_interval = {interval.low * 1e3, interval.high * 1e3};
  }
  // The heap figure was given apart (pages): the objects' own series bounds
  // the other side of where the limit bites (the pages fill first).
  auto widen = [&](const std::vector<double>& x, Interval& into, double scale) {
    if (!apart || end.heap_objects <= 0 || p.heap_limit_bytes == 0) return;
    std::optional<std::pair<double, Interval>> other = Slope(x, objects, confidence);
    if (!other || other->second.low <= 0) {
      into.high = kInfinity;
      return;
    }
    Interval interval = TimeToFill(objects_left, other->first, other->second).second;
    into.low = std::min(into.low, interval.low * scale);
    into.high = std::max(into.high, interval.high * scale);
  };
  if (p.requests_to_limit && !by_objects) widen(thousands, p.requests_interval, 1e3);

  // Each growing site alone, at its last part's sampled rate.
  if (p.heap_limit_bytes > 0) {
    for (LeakSite& site : report.sites) {
      if (site.verdict != LeakVerdict::kGrowing || site.late.PerMinute() <= 0) continue;
      auto [estimate, interval] = TimeToFill(left, site.late.PerMinute(), site.late.PerMinuteInterval());
      site.minutes_to_limit = estimate;
      site.minutes_interval = interval;
      if (auto rate = site.late.Per1000Requests(); rate && *rate > 0) {
        auto [n, ni] = TimeToFill(left, *rate, *site.late.Per1000RequestsInterval());
        site.requests_to_limit = n * 1e3;
        site.requests_interval = {ni.low * 1e3, ni.high * 1e3};
      }
    }
  }

  const double rate = p.rate_per_minute;
  const Interval& rates = p.rate_interval;
  const std::string used_text = LeakBytesText(static_cast<double>(p.heap_used_bytes));
  const std::string of_limit = p.heap_limit_bytes > 0
                                   ? fmt::format("{} of the {} limit{}", used_text, LeakBytesText(limit),
                                                 p.limit_source.empty() ? std::string() : " (" + p.limit_source + ")")
                                   : used_text + " (limit not known)";
  const double seconds = end.minutes * 60;  // the span of the slopes
  if (!p.growing && by_request) {
    p.text = fmt::format("heap used {}: not growing (the last {:.0f} s: {} per 1000 requests, 95 %: {} to {})",
                         of_limit, seconds, SignedBytes(decides->first), SignedBytes(decides->second.low),
                         SignedBytes(decides->second.high));
    return;
  }
  if (!p.growing) {
    p.text = fmt::format("heap used {}: not growing (the last {:.0f} s: {}/min, 95 %: {} to {})", of_limit, seconds,
                         SignedBytes(rate), SignedBytes(rates.low), SignedBytes(rates.high));
    return;
  }
  const std::string growing = fmt::format("heap used {}, growing {}/min ±{}", of_limit, LeakBytesText(rate),
                                          LeakBytesText(rates.HalfWidth(rate)));
  if (p.heap_limit_bytes == 0) {
    p.text = growing;
    return;
  }
  if (by_request && p.requests_to_limit) {
    // The requests left over the pace (the last part's, or the session's
    // trend): the interval holds the requests', the pace's and its scatter's.
    const std::string assumes = ProjectMinutes(in, p);
    p.text =
        fmt::format("{}: limit in ~{} (95 %: {}-{}: the requests left {}), or after ~{} more requests (95 %: {}-{})",
                    growing, MinutesText(p.minutes_to_limit), MinutesText(p.minutes_interval.low),
                    MinutesText(p.minutes_interval.high), assumes, RequestsText(*p.requests_to_limit),
                    RequestsText(p.requests_interval.low), RequestsText(p.requests_interval.high));
    return;
  }
  p.minutes_to_limit = left / rate;
  p.minutes_interval = {left / rates.high, rates.low > 0 ? left / rates.low : kInfinity};
  widen(minutes, p.minutes_interval, 1);
  p.text = fmt::format("{}: limit in ~{} (95 %: {}-{})", growing, MinutesText(p.minutes_to_limit),
                       MinutesText(p.minutes_interval.low), MinutesText(p.minutes_interval.high));
  if (p.requests_to_limit) {
    p.text += fmt::format(", or after ~{} more requests (95 %: {}-{})", RequestsText(*p.requests_to_limit),
                          RequestsText(p.requests_interval.low), RequestsText(p.requests_interval.high));
  }
}

}  // namespace heapprof::internal
