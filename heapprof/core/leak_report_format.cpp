// A leak report for people and for pages: the terminal table
// (FormatLeakReport) and the JSON with each site's live series
// (LeakReportJson). The report itself: heapprof/core/leaks.cpp.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "heapprof/core/leak_projection.h"
#include "heapprof/core/leaks.h"

namespace heapprof {
namespace {

using internal::MinutesText;
using internal::RequestsText;
using internal::SignedBytes;

std::string FrameText(const Frame& f) {
  std::string name = f.function_name.empty() ? "(anonymous)" : f.function_name;
  if (f.script_name.empty()) return name;
  std::string script = f.script_name;
  if (size_t slash = script.find_last_of('/'); slash != std::string::npos) script = script.substr(slash + 1);
  return f.line > 0 ? fmt::format("{} ({}:{})", name, script, f.line) : fmt::format("{} ({})", name, script);
}

std::string SiteText(const LeakSite& site, size_t frames) {
  if (site.frames.empty()) return "(root)";
  std::string out;
  for (size_t i = 0; i < site.frames.size() && i < frames; ++i) {
    if (i > 0) out += " < ";
    out += FrameText(site.frames[i]);
  }
  if (site.frames.size() > frames) out += " < ...";
  return out;
}

std::string Percent(double fraction) { return fmt::format("{:.2g} %", fraction * 100); }

}  // namespace

std::string FormatLeakReport(const LeakReport& report, size_t top) {
  std::string out;
  const double seconds = static_cast<double>(report.end_unix_nanos - report.start_unix_nanos) / 1e9;
  out += fmt::format("Growth over {:.0f} s ({} snapshots{}, interval {}, {} live samples at the end):\n", seconds,
                     report.last - report.first + 1,
                     report.requests ? fmt::format(", {} requests", *report.requests) : std::string(),
                     LeakBytesText(static_cast<double>(report.interval_bytes)), report.live_samples);
  out += "  " + report.projection.text + "\n\n";
  const bool per_request = report.requests.has_value() && *report.requests > 0;
  out += fmt::format("  {:<8} {:>11} {:>24}{}  {}\n", "verdict", "live", "growth/min (95 %)",
                     per_request ? fmt::format(" {:>22}", "per 1000 requests") : std::string(), "site");
  size_t shown = 0, hidden = 0;
  for (const LeakSite& site : report.sites) {
    const bool always = site.verdict == LeakVerdict::kGrowing || site.verdict == LeakVerdict::kBounded;
    if (!always && shown >= top) {
      ++hidden;
      continue;
    }
    ++shown;
    const double rate = site.whole.PerMinute();
    std::string per =
        per_request ? fmt::format(" {:>22}", fmt::format("{} ±{}", SignedBytes(*site.whole.Per1000Requests()),
                                                         LeakBytesText(site.whole.Per1000RequestsInterval()->HalfWidth(
                                                             *site.whole.Per1000Requests()))))
                    : std::string();
    out += fmt::format(
        "  {:<8} {:>11} {:>24}{}  {}\n", LeakVerdictName(site.verdict), LeakBytesText(site.live_end.value),
        fmt::format("{} ±{}", SignedBytes(rate), LeakBytesText(site.whole.PerMinuteInterval().HalfWidth(rate))), per,
        SiteText(site, 4));
    if (site.verdict != LeakVerdict::kSteady) out += "           " + site.reason + "\n";
    if (site.minutes_to_limit) {
      out += fmt::format(
          "           alone it fills the limit in ~{} (95 %: {}-{}){}\n", MinutesText(*site.minutes_to_limit),
          MinutesText(site.minutes_interval.low), MinutesText(site.minutes_interval.high),
          site.requests_to_limit ? fmt::format(", after ~{} more requests", RequestsText(*site.requests_to_limit))
                                 : std::string());
    }
  }
  if (hidden > 0) out += fmt::format("  ... {} more sites (steady or unclear)\n", hidden);
  out += fmt::format(
      "\n  Verdicts at a family-wise {} for look {} ({} tests after Tarone's correction: {} each); "
      "rates are over the whole interval, the verdict's test over its last part ({:.0f} s).\n",
      Percent(report.alpha), report.look, report.tests, fmt::format("{:.2g}", report.alpha_per_test),
      report.sites.empty() ? 0.0 : report.sites.front().late.seconds);
  return out;
}

std::string LeakReportJson(const LeakReport& report, const LeakTracker* tracker, size_t series_sites,
                           size_t series_points) {
  using Json = nlohmann::json;
  auto growth = [](const Growth& g) {
    Json j{{"bytes", g.bytes},
           {"low", g.interval.low},
           {"high", g.interval.high},
           {"p_value", g.p_value},
           {"seconds", g.seconds},
           {"born_bytes", g.born.value},
           {"born_samples", g.born.samples},
           {"died_bytes", g.died.value},
           {"died_samples", g.died.samples},
           {"per_minute", g.PerMinute()},
           {"per_minute_low", g.PerMinuteInterval().low},
           {"per_minute_high", g.PerMinuteInterval().high}};
    if (g.requests) j["requests"] = *g.requests;
    if (auto r = g.Per1000Requests()) {
      j["per_1000_requests"] = *r;
      j["per_1000_requests_low"] = g.Per1000RequestsInterval()->low;
      j["per_1000_requests_high"] = g.Per1000RequestsInterval()->high;
    }
    return j;
  };
  Json root;
  root["first_snapshot"] = report.first;
  root["middle_snapshot"] = report.middle;
  root["last_snapshot"] = report.last;
  root["snapshots"] = report.snapshots;
  root["start_unix_nanos"] = report.start_unix_nanos;
  root["end_unix_nanos"] = report.end_unix_nanos;
  if (report.requests) root["requests"] = *report.requests;
  root["interval_bytes"] = report.interval_bytes;
  root["live_samples"] = report.live_samples;
  root["look"] = report.look;
  root["alpha"] = report.alpha;
  root["alpha_per_test"] = report.alpha_per_test;
  root["tests"] = report.tests;
  const LeakProjection& p = report.projection;
  Json projection{{"heap_used_bytes", p.heap_used_bytes},
                  {"heap_limit_bytes", p.heap_limit_bytes},
                  {"growing", p.growing},
                  {"growth", growth(p.growth)},
                  {"text", p.text}};
  if (!p.limit_source.empty()) projection["limit_source"] = p.limit_source;
  // `name` with its 95 % interval as name_low and name_high (null when unbounded).
  auto with_interval = [&projection](const std::string& name, double value, const Interval& interval) {
    projection[name] = value;
    projection[name + "_low"] = interval.low;
    projection[name + "_high"] = std::isfinite(interval.high) ? Json(interval.high) : Json();
  };
  if (p.per_1000_requests) with_interval("per_1000_requests", *p.per_1000_requests, p.per_1000_requests_interval);
  if (p.requests_per_minute) {
    with_interval("requests_per_minute", *p.requests_per_minute, p.requests_per_minute_interval);
  }
  if (!p.pace_from.empty()) projection["pace_from"] = p.pace_from;
  if (p.seconds_per_request) {
    projection["seconds_per_request"] = *p.seconds_per_request;
    with_interval("seconds_per_request_per_mib", *p.seconds_per_request_per_mib,
                  p.seconds_per_request_per_mib_interval);
  }
  if (p.minutes_at_last_pace) {
    with_interval("minutes_at_last_pace", *p.minutes_at_last_pace, p.minutes_at_last_pace_interval);
  }
  projection["rate_per_minute"] = p.rate_per_minute;
  projection["rate_low"] = p.rate_interval.low;
  projection["rate_high"] = p.rate_interval.high;
  projection["rate_from"] = p.rate_from;
  if (p.requests_to_limit) {
    projection["requests_to_limit"] = *p.requests_to_limit;
    projection["requests_low"] = p.requests_interval.low;
    projection["requests_high"] = std::isfinite(p.requests_interval.high) ? Json(p.requests_interval.high) : Json();
  }
  if (p.growing && p.heap_limit_bytes > 0) {
    projection["minutes_to_limit"] = p.minutes_to_limit;
    projection["minutes_low"] = p.minutes_interval.low;
    projection["minutes_high"] = std::isfinite(p.minutes_interval.high) ? Json(p.minutes_interval.high) : Json();
  }
  root["projection"] = projection;
  Json sites = Json::array();
  std::vector<int64_t> times = tracker ? tracker->SnapshotTimes() : std::vector<int64_t>{};
  // The chart's snapshots: every one, or an even subset of at most series_points.
  std::vector<size_t> picked;
  if (!times.empty() && series_points > 0) {
    const size_t n = times.size();
    const size_t step = (n + series_points - 1) / series_points;
    for (size_t k = 0; k < n; k += std::max<size_t>(1, step)) picked.push_back(k);
    if (picked.back() != n - 1) picked.push_back(n - 1);
    Json t = Json::array();
    for (size_t k : picked) t.push_back(times[k]);
    root["series_unix_nanos"] = t;
  }
  for (size_t i = 0; i < report.sites.size(); ++i) {
    const LeakSite& site = report.sites[i];
    Json frames = Json::array();
    for (const Frame& f : site.frames) {
      frames.push_back(
          {{"function", f.function_name}, {"script", f.script_name}, {"line", f.line}, {"column", f.column}});
    }
    Json s{{"verdict", LeakVerdictName(site.verdict)},
           {"reason", site.reason},
           {"name", SiteText(site, 1)},
           {"stack", SiteText(site, 64)},
           {"frames", frames},
           {"live_start_bytes", site.live_start.value},
           {"live_bytes", site.live_end.value},
           {"live_low", site.live_end_interval.low},
           {"live_high", site.live_end_interval.high},
           {"live_samples", site.live_end.samples},
           {"whole", growth(site.whole)},
           {"early", growth(site.early)},
           {"late", growth(site.late)}};
    if (site.minutes_to_limit) {
      s["minutes_to_limit"] = *site.minutes_to_limit;
      s["minutes_low"] = site.minutes_interval.low;
      s["minutes_high"] = std::isfinite(site.minutes_interval.high) ? Json(site.minutes_interval.high) : Json();
    }
    if (site.requests_to_limit) {
      s["requests_to_limit"] = *site.requests_to_limit;
      s["requests_low"] = site.requests_interval.low;
      s["requests_high"] = std::isfinite(site.requests_interval.high) ? Json(site.requests_interval.high) : Json();
    }
    if (tracker && i < series_sites && !picked.empty()) {
      std::vector<double> series = tracker->LiveSeries(site.site_index);
      Json values = Json::array();
      for (size_t k : picked) values.push_back(series[k]);
      s["series"] = values;
    }
    sites.push_back(std::move(s));
  }
  root["sites"] = std::move(sites);
  return root.dump();
}
}  // namespace heapprof
