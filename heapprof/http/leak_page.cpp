#include "heapprof/http/leak_page.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <nlohmann/json.hpp>

#include "heapprof/core/leaks.h"
#include "heapprof/core/text.h"

namespace heapprof::internal {
namespace {

using Json = nlohmann::json;

// Most rows a page lists (growing and bounded sites always).
constexpr size_t kMaxRows = 50;
constexpr int kWidth = 900, kHeight = 280, kLeft = 80, kBottom = 30, kTop = 10, kRight = 20;

// A member, or an empty object when there is none (const operator[] must not miss).
const Json& Field(const Json& j, const char* key) {
  static const Json kNone = Json::object();
  auto it = j.find(key);
  return it == j.end() ? kNone : *it;
}

const char* VerdictColour(std::string_view verdict) {
  if (verdict == "growing") return "#c62828";
  if (verdict == "bounded") return "#ef6c00";
  if (verdict == "steady") return "#607d8b";
  return "#1565c0";  // unclear
}

std::string QueryText(std::string_view text) {
  std::string out;
  for (unsigned char c : text) {
    out += std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' ? std::string(1, static_cast<char>(c))
                                                                           : fmt::format("%{:02X}", c);
  }
  return out;
}

std::string Signed(double bytes) { return (bytes >= 0 ? "+" : "-") + LeakBytesText(std::abs(bytes)); }

std::string FunctionOf(const Json& site) {
  const Json& frames = site.value("frames", Json::array());
  if (frames.empty()) return "(root)";
  std::string f = frames.front().value("function", "");
  return f.empty() ? "(anonymous)" : f;
}

// The chart: live bytes of each site with a series against seconds since the first snapshot.
std::string Chart(const Json& report) {
  const Json& times = report.value("series_unix_nanos", Json::array());
  if (times.size() < 2) return "<p>The chart needs two snapshots.</p>\n";
  const double t0 = times.front().get<double>(), t1 = times.back().get<double>();
  double top = 1;
  for (const Json& site : report["sites"]) {
    if (!site.contains("series")) continue;
    for (const Json& v : site["series"]) top = std::max(top, v.get<double>());
  }
  const double span = std::max(1.0, (t1 - t0) / 1e9);
  const int w = kWidth - kLeft - kRight, h = kHeight - kTop - kBottom;
  auto x = [&](double t) { return kLeft + (t - t0) / 1e9 / span * w; };
  auto y = [&](double v) { return kTop + h - v / top * h; };
  std::string svg = fmt::format(
      "<svg id=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" role=\"img\" "
      "aria-label=\"live bytes per site over the session\">\n"
      "<line x1=\"{l}\" y1=\"{b}\" x2=\"{r}\" y2=\"{b}\" stroke=\"#333\"/>"
      "<line x1=\"{l}\" y1=\"{t}\" x2=\"{l}\" y2=\"{b}\" stroke=\"#333\"/>\n"
      "<text x=\"{l}\" y=\"{lab}\" font-size=\"11\">0 s</text>"
      "<text x=\"{r}\" y=\"{lab}\" font-size=\"11\" text-anchor=\"end\">{span:.0f} s</text>"
      "<text x=\"{yl}\" y=\"{tt}\" font-size=\"11\" text-anchor=\"end\">{topb}</text>"
      "<text x=\"{yl}\" y=\"{b}\" font-size=\"11\" text-anchor=\"end\">0</text>\n",
      kWidth, kHeight, fmt::arg("l", kLeft), fmt::arg("r", kWidth - kRight), fmt::arg("t", kTop),
      fmt::arg("b", kTop + h), fmt::arg("lab", kTop + h + 16), fmt::arg("span", span), fmt::arg("yl", kLeft - 6),
      fmt::arg("tt", kTop + 10), fmt::arg("topb", EscapeMarkup(LeakBytesText(top))));
  size_t index = 0, drawn = 0;
  std::string legend;
  for (const Json& site : report["sites"]) {
    ++index;
    if (!site.contains("series")) continue;
    // The colour says the verdict; the dashes tell sites of one verdict apart.
    static constexpr const char* kDashes[] = {"", "8 3", "2 3", "8 3 2 3", "12 4", "4 4"};
    const char* dash = kDashes[drawn++ % std::size(kDashes)];
    const Json& series = site["series"];
    std::string points;
    for (size_t k = 0; k < series.size() && k < times.size(); ++k) {
      points += fmt::format("{}{:.1f},{:.1f}", points.empty() ? "" : " ", x(times[k].get<double>()),
                            y(series[k].get<double>()));
    }
    const std::string verdict = site.value("verdict", "unclear");
    svg += fmt::format(
        "<polyline class=\"series\" data-site=\"{}\" data-function=\"{}\" data-verdict=\"{}\" fill=\"none\" "
        "stroke=\"{}\" stroke-width=\"2\" stroke-dasharray=\"{}\" points=\"{}\"><title>{}</title></polyline>\n",
        index, EscapeMarkup(FunctionOf(site)), EscapeMarkup(verdict), VerdictColour(verdict), dash, points,
        EscapeMarkup(site.value("name", "")));
    legend += fmt::format(
        "<li><svg width=\"36\" height=\"10\"><line x1=\"0\" y1=\"5\" x2=\"36\" y2=\"5\" stroke=\"{}\" "
        "stroke-width=\"2\" stroke-dasharray=\"{}\"/></svg> {} <small>({})</small></li>\n",
        VerdictColour(verdict), dash, EscapeMarkup(site.value("name", "")), EscapeMarkup(verdict));
  }
  return svg + "</svg>\n<ul id=\"legend\" style=\"list-style:none;padding:0\">\n" + legend + "</ul>\n";
}

}  // namespace

Result<std::string> RenderLeakPage(std::string_view report_json, std::string_view target) {
  Json report = Json::parse(report_json, nullptr, /*allow_exceptions=*/false);
  if (report.is_discarded() || !report.is_object() || !report.contains("sites") || !report["sites"].is_array() ||
      !report.contains("projection")) {
    return Error(ErrorCode::kInvalidArgument, "not a leak report");
  }
  const Json& session = report.value("session", Json::object());
  std::string html = fmt::format(
      "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>heapprof: leaks on {t}</title>\n"
      "<style>body{{font-family:sans-serif;margin:1.5em}} table{{border-collapse:collapse}} "
      "td,th{{border:1px solid #ccc;padding:3px 6px;text-align:left}} td.num{{text-align:right}} "
      ".verdict{{font-weight:bold}} .swatch{{display:inline-block;width:.9em;height:.9em;margin-right:.3em}}</style>\n"
      "</head><body>\n<h1>Leak verdicts: {t}</h1>\n<p id=\"projection\">{p}</p>\n",
      fmt::arg("t", EscapeMarkup(target)), fmt::arg("p", EscapeMarkup(Field(report, "projection").value("text", ""))));
  html += fmt::format(
      "<p id=\"session\">{} live snapshots over {:.0f} s, one every {:g} s{}{}; they paused the worker {:.1f} ms in "
      "all ({:.2f} % of the session), the slowest {:.1f} ms. Look {} of this session: verdicts at a family-wise "
      "{:.3g} ({} tests, {:.2g} each); reloading the page is the next look.</p>\n",
      session.value("snapshots", 0), session.value("seconds", 0.0), session.value("cadence_seconds", 0.0),
      session.value("full_gc", true) ? ", each after a full GC" : "",
      report.contains("requests") ? fmt::format(", {} requests", report["requests"].get<uint64_t>()) : std::string(),
      session.value("snapshot_ms_total", 0.0), session.value("paused_share", 0.0) * 100,
      session.value("snapshot_ms_max", 0.0), report.value("look", 1), report.value("alpha", 0.0),
      report.value("tests", 0), report.value("alpha_per_test", 0.0));
  if (session.value("restarts", 0) > 0) {
    html += fmt::format("<p>The isolate was recreated {} time(s); this session began with the current one.</p>\n",
                        session.value("restarts", 0));
  }
  html += "<h2>Live bytes per site</h2>\n" + Chart(report);
  const bool per_request = report.contains("requests");
  html += fmt::format(
      "<h2>Sites</h2>\n<table id=\"sites\">\n<tr><th>verdict</th><th>live</th><th>growth/min (95 %)</th>{}"
      "<th>p (last part)</th><th>site</th><th>why</th></tr>\n",
      per_request ? "<th>per 1000 requests</th>" : "");
  size_t shown = 0, hidden = 0, index = 0;
  for (const Json& site : report["sites"]) {
    ++index;
    const std::string verdict = site.value("verdict", "unclear");
    if (verdict != "growing" && verdict != "bounded" && shown >= kMaxRows) {
      ++hidden;
      continue;
    }
    ++shown;
    const Json& whole = Field(site, "whole");
    const double rate = whole.value("per_minute", 0.0);
    const double half =
        std::max(rate - whole.value("per_minute_low", rate), whole.value("per_minute_high", rate) - rate);
    std::string per;
    if (per_request) {
      per =
          whole.contains("per_1000_requests")
              ? fmt::format("<td class=\"num\">{}</td>", EscapeMarkup(Signed(whole["per_1000_requests"].get<double>())))
              : "<td></td>";
    }
    html += fmt::format(
        "<tr class=\"site\" data-site=\"{}\" data-function=\"{}\" data-verdict=\"{}\">"
        "<td class=\"verdict\"><span class=\"swatch\" style=\"background:{}\"></span>{}</td>"
        "<td class=\"num\">{}</td><td class=\"num\">{} &plusmn;{}</td>{}<td class=\"num\">{:.2g}</td>"
        "<td title=\"{}\">{}</td><td>{}</td></tr>\n",
        index, EscapeMarkup(FunctionOf(site)), EscapeMarkup(verdict), VerdictColour(verdict), EscapeMarkup(verdict),
        EscapeMarkup(LeakBytesText(site.value("live_bytes", 0.0))), EscapeMarkup(Signed(rate)),
        EscapeMarkup(LeakBytesText(half)), per, Field(site, "late").value("p_value", 1.0),
        EscapeMarkup(site.value("stack", "")), EscapeMarkup(site.value("name", "")),
        EscapeMarkup(site.value("reason", "")));
  }
  html += "</table>\n";
  if (hidden > 0) html += fmt::format("<p>{} more sites (steady or unclear) are in the JSON.</p>\n", hidden);
  html += fmt::format(
      "<p>The numbers as JSON: <a href=\"leaks?target={}\">leaks?target={}</a> (each read is a look "
      "too).</p>\n</body></html>\n",
      QueryText(target), EscapeMarkup(target));
  return html;
}

}  // namespace heapprof::internal
