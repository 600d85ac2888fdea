#include "tools/heapprof/leaks_report.h"

#include <fmt/format.h>

#include "heapprof/core/file_io.h"
#include "tools/heapprof/commands.h"

namespace heapprof::cli {

void AddLeakComments(Profile& profile, const LeakReport& report, size_t top) {
  auto comment = [&](const std::string& text) { profile.comments.push_back(profile.AddString(text)); };
  comment("leaks: " + report.projection.text);
  comment(fmt::format("leaks_session: {} snapshots over {:.0f} s, look {}, alpha {:.3g} ({} tests)",
                      report.last - report.first + 1,
                      static_cast<double>(report.end_unix_nanos - report.start_unix_nanos) / 1e9, report.look,
                      report.alpha, report.tests));
  size_t shown = 0;
  for (const LeakSite& site : report.sites) {
    const bool always = site.verdict == LeakVerdict::kGrowing || site.verdict == LeakVerdict::kBounded;
    if (!always && shown >= top) continue;
    ++shown;
    const Interval rate = site.whole.PerMinuteInterval();
    const std::string name = site.frames.empty() ? "(root)" : site.frames.front().function_name;
    comment(fmt::format("leak_site: {} {} live {:.0f} bytes, {:.0f} bytes/min (95 %: {:.0f} to {:.0f})",
                        LeakVerdictName(site.verdict), name.empty() ? "(anonymous)" : name, site.live_end.value,
                        site.whole.PerMinute(), rate.low, rate.high));
  }
}

int PrintLeakReport(const std::string& command, const LeakReport& report, const LeakTracker& tracker,
                    const std::string& json_path, size_t top) {
  fmt::print("\n{}", FormatLeakReport(report, top));
  if (json_path.empty()) return kExitOk;
  if (Status s = WriteFileAtomic(json_path, LeakReportJson(report, &tracker)); !s.ok()) return Fail(command, s);
  fmt::print("Growth report (JSON): {}\n", json_path);
  return kExitOk;
}

}  // namespace heapprof::cli
