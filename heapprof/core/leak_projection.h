// Internal: the projection of a leak report (LeakTracker::Report): when the
// heap reaches its limit, in requests served and in minutes. The statistics:
// docs/statistics.md ("The projection").
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "heapprof/core/leaks.h"

namespace heapprof::internal {

// One snapshot of the projection's last part (at least the report's [m, b]).
struct ProjectionPoint {
  double minutes = 0;                // since m
  std::optional<uint64_t> requests;  // served so far, when counted
  double heap_used = 0;              // the figure the projection follows; 0: not known
  double heap_objects = 0;           // the objects' bytes (info.heap_used_bytes)
};

struct ProjectionInput {
  std::vector<ProjectionPoint> last_part;  // in time order, at least two
  std::vector<ProjectionPoint> session;    // every snapshot of [a, b]: the pace's trend
  uint64_t limit_bytes = 0;                // 0: not known
  std::string limit_source;
  Growth sampled;  // every site together over [m, b]: the rate when last_part has fewer than 3 snapshots
  double confidence = kConfidence;
};

// Fills report.projection, and each growing site's time to fill what is left
// alone (report.sites' verdicts must be set).
void ProjectLimit(const ProjectionInput& input, LeakReport& report);

// Least-squares slope of y on t (per unit of t) with its interval at
// `confidence`: Student t on the residuals, widened for their positive lag-1
// autocorrelation. Empty below 3 points or when t does not vary.
std::optional<std::pair<double, Interval>> Slope(const std::vector<double>& t, const std::vector<double>& y,
                                                 double confidence);

// "12 s", "63 min", "2.5 h", "never".
std::string MinutesText(double minutes);
// "2558", "410k", "1.2M", "never".
std::string RequestsText(double requests);
// "+1.5 MiB", "-300 B".
std::string SignedBytes(double bytes);

}  // namespace heapprof::internal
