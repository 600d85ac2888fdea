// Internal: the pace of a leak report's projection, from requests to minutes.
// Time per request against heap used over the session's snapshots (weighted
// least squares: a worker slows as its heap fills, each collection taking
// longer), integrated over the requests left to the limit, with a prediction
// interval that holds the fit's error and the pace's own scatter between
// snapshots (correlated over time as an AR(1) series). The statistics:
// docs/statistics.md ("The projection").
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "heapprof/core/leak_projection.h"

namespace heapprof::internal {

// The fewest snapshots whose pace's trend is fitted (4 intervals: 2 degrees of freedom).
inline constexpr size_t kMinPaceSnapshots = 5;

// Seconds per request = intercept + slope * heap bytes, weighted by the
// requests of each interval between snapshots.
struct PaceFit {
  size_t intervals = 0;     // between snapshots with requests served
  double intercept = 0;     // seconds per request at no heap
  double slope = 0;         // seconds per request per heap byte
  Interval slope_interval;  // at the confidence asked, widened for the residuals' autocorrelation
  double variance = 0;      // of one request's seconds (the residuals' weighted scatter)
  double rho = 0;           // lag-1 autocorrelation of the weighted residuals, in [0, 0.9]
  double quantile = 0;      // Student t of the residuals' degrees of freedom
  double mean_heap = 0;     // weighted by requests
  double heap_spread = 0;   // sum of weights * (heap - mean_heap)^2
  double requests = 0;      // in all the intervals
  double requests_per_interval = 0;
  double heap_now = 0;          // at the last snapshot
  double heap_per_request = 0;  // least squares over the snapshots: how the heap grows
  // The trend is used: seconds per request grow with the heap beyond noise
  // (and beyond rounding: by more than a part in 1e9 over the heap seen).
  bool slowing = false;
  double SecondsPerRequestNow() const { return intercept + slope * heap_now; }
};

// The fit over `session` (in time order), against the objects' bytes when
// given, else heap used. Empty below kMinPaceSnapshots snapshots with
// requests counted, or when the heap or the pace does not vary.
std::optional<PaceFit> FitPace(const std::vector<ProjectionPoint>& session, double confidence);

// Seconds the next `requests` take on the trend, the heap growing as it did,
// and the variance of the prediction: the fit's (the mean over the heap to
// come) plus the scatter of those requests' own seconds.
struct SecondsAhead {
  double seconds = 0;
  double variance = 0;
};
SecondsAhead TrendSeconds(const PaceFit& fit, double requests);

// The variance of the next `requests`' seconds from the scatter alone
// (AR(1) between intervals of the session's mean size).
double ScatterVariance(const PaceFit& fit, double requests);

// The minutes of a leak per request: p.requests_to_limit and its interval
// over the pace: the last part's when the session's pace does not slow
// beyond noise, the trend's when it does; the interval a prediction's (the
// pace's scatter to come included). Fills p.minutes_to_limit,
// p.minutes_interval and the pace fields (p.requests_per_minute set by the
// caller: the last part's slope, kept when there are too few snapshots);
// returns what the minutes assume, for the projection's text.
std::string ProjectMinutes(const ProjectionInput& input, LeakProjection& p);

// How far below and above a positive estimate its interval reaches, on the log scale.
double LogBelow(double v, const Interval& i);
double LogAbove(double v, const Interval& i);

// x * y and x / y of two independent positive estimates, each with its own
// interval: each end from the two sides' log distances in quadrature (the
// MOVER idea on the log scale; exact for log-normal errors).
Interval ProductInterval(double x, const Interval& xs, double y, const Interval& ys);
Interval RatioInterval(double x, const Interval& xs, double y, const Interval& ys);

}  // namespace heapprof::internal
