// The pace of a leak per request: how long the requests left to the limit
// take. The last part's pace assumes a worker that keeps its speed; a worker
// whose heap fills slows (each full collection marks more), so the seconds
// per request are fitted against heap used over the whole session, and a
// trend beyond noise is integrated over the heap to come. Either way the
// interval is a prediction's: the requests to come scatter like those seen.
// The reasons: docs/statistics.md ("The projection").
#include "heapprof/core/leak_pace.h"

#include <fmt/format.h>
#include <boost/math/distributions/students_t.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

#include "heapprof/core/math_policy.h"

namespace heapprof::internal {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();
constexpr double kMiB = 1024.0 * 1024.0;

// Sum over i, j < m of rho^|i - j|: how much the sum of m AR(1) terms varies
// over m independent ones (times m); m need not be whole.
double CorrelatedTerms(double m, double rho) {
  if (rho <= 0) return m;
  return m * (1 + rho) / (1 - rho) - 2 * rho * (1 - std::pow(rho, m)) / ((1 - rho) * (1 - rho));
}

// An estimate's interval widened on the log scale by a further relative
// spread `d` on both sides (independent: in quadrature).
Interval Widen(double v, const Interval& i, double d) {
  return {v * std::exp(-std::hypot(LogBelow(v, i), d)), v * std::exp(std::hypot(LogAbove(v, i), d))};
}

}  // namespace

double LogBelow(double v, const Interval& i) { return i.low > 0 ? std::log(v / i.low) : kInfinity; }
double LogAbove(double v, const Interval& i) {
  return std::isfinite(i.high) ? std::log(std::max(i.high, v) / v) : kInfinity;
}

Interval ProductInterval(double x, const Interval& xs, double y, const Interval& ys) {
  const double r = x * y;
  return {r * std::exp(-std::hypot(LogBelow(x, xs), LogBelow(y, ys))),
          r * std::exp(std::hypot(LogAbove(x, xs), LogAbove(y, ys)))};
}
Interval RatioInterval(double x, const Interval& xs, double y, const Interval& ys) {
  const double r = x / y;
  return {r * std::exp(-std::hypot(LogBelow(x, xs), LogAbove(y, ys))),
          r * std::exp(std::hypot(LogAbove(x, xs), LogBelow(y, ys)))};
}

std::optional<PaceFit> FitPace(const std::vector<ProjectionPoint>& session, double confidence) {
  if (session.size() < kMinPaceSnapshots) return std::nullopt;
  bool objects = true;
  for (const ProjectionPoint& q : session) {
    if (!q.requests) return std::nullopt;
    objects = objects && q.heap_objects > 0;
  }
  auto heap = [&](const ProjectionPoint& q) { return objects ? q.heap_objects : q.heap_used; };
  // One observation an interval: its seconds per request at its mean heap,
  // weighted by its requests (a request's seconds scatter alike). An interval
  // without requests joins the next.
  std::vector<double> x, y, w;
  size_t from = 0;
  for (size_t j = 1; j < session.size(); ++j) {
    const double n = static_cast<double>(*session[j].requests) - static_cast<double>(*session[from].requests);
    if (n <= 0) continue;
    const double seconds = (session[j].minutes - session[from].minutes) * 60;
    x.push_back((heap(session[from]) + heap(session[j])) / 2);
    y.push_back(seconds / n);
    w.push_back(n);
    from = j;
  }
  const size_t k = x.size();
  if (k + 1 < kMinPaceSnapshots) return std::nullopt;
  PaceFit fit;
  fit.intervals = k;
  double xm = 0, ym = 0;
  for (size_t j = 0; j < k; ++j) {
    fit.requests += w[j];
    xm += w[j] * x[j];
    ym += w[j] * y[j];
  }
  xm /= fit.requests;
  ym /= fit.requests;
  double sxx = 0, sxy = 0;
  for (size_t j = 0; j < k; ++j) {
    sxx += w[j] * (x[j] - xm) * (x[j] - xm);
    sxy += w[j] * (x[j] - xm) * (y[j] - ym);
  }
  if (!(sxx > 0) || !(ym > 0)) return std::nullopt;
  fit.slope = sxy / sxx;
  fit.intercept = ym - fit.slope * xm;
  fit.mean_heap = xm;
  fit.heap_spread = sxx;
  fit.requests_per_interval = fit.requests / static_cast<double>(k);
  // The residuals in a request's units (times the root of the weight): their
  // scatter is one request's, their lag-1 correlation the load's memory.
  double ss = 0, lag = 0, previous = 0;
  for (size_t j = 0; j < k; ++j) {
    const double e = std::sqrt(w[j]) * (y[j] - fit.intercept - fit.slope * x[j]);
    ss += e * e;
    if (j > 0) lag += e * previous;
    previous = e;
  }
  fit.variance = ss / static_cast<double>(k - 2);
  // The lag-1 estimate comes low by about (1 + 3 rho) / k over k residuals
  // (Kendall 1954): corrected, as the load's memory is what widens the interval.
  const double r = ss > 0 ? lag / ss : 0.0;
  fit.rho = ss > 0 ? std::clamp(r + (1 + 3 * r) / static_cast<double>(k), 0.0, 0.9) : 0.0;
  const boost::math::students_t_distribution<double, NoThrow> student(static_cast<double>(k - 2));
  fit.quantile = boost::math::quantile(student, 1 - (1 - confidence) / 2);
  const double se = std::sqrt(fit.variance / sxx * (1 + fit.rho) / (1 - fit.rho));
  fit.slope_interval = {fit.slope - fit.quantile * se, fit.slope + fit.quantile * se};
  fit.slowing = fit.slope_interval.low > 0 && fit.slope * std::sqrt(sxx / fit.requests) > 1e-9 * ym;
  // How the same heap figure grows per request (least squares over the snapshots).
  const ProjectionPoint& end = session.back();
  fit.heap_now = heap(end);
  double nm = 0, hm = 0;
  for (const ProjectionPoint& q : session) {
    nm += static_cast<double>(*q.requests);
    hm += heap(q);
  }
  nm /= static_cast<double>(session.size());
  hm /= static_cast<double>(session.size());
  double snn = 0, snh = 0;
  for (const ProjectionPoint& q : session) {
    snn += (static_cast<double>(*q.requests) - nm) * (static_cast<double>(*q.requests) - nm);
    snh += (static_cast<double>(*q.requests) - nm) * (heap(q) - hm);
  }
  fit.heap_per_request = snn > 0 ? std::max(0.0, snh / snn) : 0.0;
  return fit;
}

double ScatterVariance(const PaceFit& fit, double requests) {
  const double m = std::max(1.0, requests / fit.requests_per_interval);
  return fit.variance * fit.requests_per_interval * CorrelatedTerms(m, fit.rho);
}

SecondsAhead TrendSeconds(const PaceFit& fit, double requests) {
  // Heap grows linearly in requests: the mean seconds per request over the
  // next `requests` is the line's at their mean heap.
  const double heap = fit.heap_now + fit.heap_per_request * requests / 2;
  const double per_request = fit.intercept + fit.slope * heap;
  const double d = heap - fit.mean_heap;
  const double mean_variance =
      fit.variance * (1 / fit.requests + d * d / fit.heap_spread) * (1 + fit.rho) / (1 - fit.rho);
  return {requests * per_request, requests * requests * mean_variance + ScatterVariance(fit, requests)};
}

std::string ProjectMinutes(const ProjectionInput& in, LeakProjection& p) {
  const double n = *p.requests_to_limit, per_minute = *p.requests_per_minute;
  const ProjectionPoint &first = in.last_part.front(), &end = in.last_part.back();
  const double seconds = (end.minutes - first.minutes) * 60;
  auto last_part = [&](double pace, double relative) {
    return fmt::format("at the pace of the last {:.0f} s, {:.4g} requests/s ±{:.2g} %", seconds, pace, 100 * relative);
  };
  // The last part's pace (the slope of requests against time): the requests' interval over the pace's.
  p.minutes_to_limit = n / per_minute;
  p.minutes_interval =
      n > 0 ? RatioInterval(n, p.requests_interval, per_minute, p.requests_per_minute_interval) : Interval{0, 0};
  p.minutes_at_last_pace = p.minutes_to_limit;
  p.minutes_at_last_pace_interval = p.minutes_interval;
  std::optional<PaceFit> fit = FitPace(in.session, in.confidence);
  const double last_requests =
      static_cast<double>(end.requests.value_or(0)) - static_cast<double>(first.requests.value_or(0));
  if (!fit || !(last_requests > 0) || !(seconds > 0)) {
    p.pace_from = "too few snapshots";
    return last_part(per_minute / 60, p.requests_per_minute_interval.HalfWidth(per_minute) / per_minute) +
           ", if it goes on; too few snapshots to tell its trend";
  }
  p.seconds_per_request = fit->SecondsPerRequestNow();
  p.seconds_per_request_per_mib = fit->slope * kMiB;
  p.seconds_per_request_per_mib_interval = {fit->slope_interval.low * kMiB, fit->slope_interval.high * kMiB};
  // The last part's pace as a constant: its seconds per request, whose error
  // is the session's scatter over its requests (AR(1)-widened; on the log
  // scale, as the minutes' spread below).
  const double inflation = (1 + fit->rho) / (1 - fit->rho);
  const double constant = seconds / last_requests;
  const double constant_variance = fit->variance * inflation / last_requests;
  const double relative = fit->quantile * std::sqrt(constant_variance) / constant;
  p.requests_per_minute = 60 / constant;
  p.requests_per_minute_interval = {60 / constant * std::exp(-relative), 60 / constant * std::exp(relative)};
  if (n <= 0) {
    p.pace_from = "last part";
    p.minutes_to_limit = 0;
    return last_part(1 / constant, relative);
  }
  // Either model's minutes: the prediction's spread (the pace's error and the
  // scatter to come), and the requests' own interval through it (monotone).
  auto predict = [&](double minutes, double variance, const Interval& by_requests) {
    return minutes > 0 ? Widen(minutes, by_requests, fit->quantile * std::sqrt(variance) / (minutes * 60))
                       : Interval{0, kInfinity};
  };
  const SecondsAhead ahead = TrendSeconds(*fit, n);
  const double trend = ahead.seconds / 60;
  const Interval trend_interval =
      predict(trend, ahead.variance,
              {TrendSeconds(*fit, p.requests_interval.low).seconds / 60,
               std::isfinite(p.requests_interval.high) ? TrendSeconds(*fit, p.requests_interval.high).seconds / 60
                                                       : kInfinity});
  if (!fit->slowing) {
    // No trend beyond noise: the last part's pace and the scatter to come; a
    // slowing the session cannot exclude stays inside the interval.
    p.pace_from = "last part";
    p.minutes_to_limit = n * constant / 60;
    p.minutes_interval = predict(p.minutes_to_limit, n * n * constant_variance + ScatterVariance(*fit, n),
                                 {p.requests_interval.low * constant / 60, p.requests_interval.high * constant / 60});
    const std::string text = last_part(1 / constant, relative) + " and its scatter, if it goes on";
    if (fit->slope <= 0) return text + " (no slowing as the heap filled)";
    p.minutes_interval = {std::min(p.minutes_interval.low, trend_interval.low),
                          std::max(p.minutes_interval.high, trend_interval.high)};
    return text + " (no slowing beyond noise as the heap filled; the interval holds what the session cannot exclude)";
  }
  p.pace_from = "trend";
  p.minutes_to_limit = trend;
  p.minutes_interval = trend_interval;
  const double now = fit->SecondsPerRequestNow();
  const double mean = ahead.seconds / n;  // seconds per request to the limit
  return fmt::format(
      "at the session's pace slowing as its heap fills ({} snapshots), {:.4g} requests/s now, {:.4g} on average "
      "to the limit, and its scatter, if that trend goes on",
      in.session.size(), 1 / now, 1 / mean);
}

}  // namespace heapprof::internal
