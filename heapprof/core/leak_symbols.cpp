// A leak report's sites named as the profile tables name them: their frames
// go through the symbolizer (Symbolize) as a small profile of their own, one
// location per distinct frame, and come back with the original function,
// source and line wherever a source map has them.
#include <map>
#include <tuple>

#include "heapprof/core/leaks.h"
#include "heapprof/core/profile_tables.h"

namespace heapprof {

SymbolizeResult SymbolizeLeakReport(LeakReport& report, SourceMapProvider& provider) {
  Profile profile;
  internal::StringInterner intern(profile);
  internal::LocationTable locations(profile, intern);
  // Each distinct frame once; the sites keep their locations to read back.
  std::map<std::tuple<std::string, std::string, int, int>, LocationId> seen;
  std::vector<std::vector<LocationId>> site_locations(report.sites.size());
  for (size_t i = 0; i < report.sites.size(); ++i) {
    for (const Frame& f : report.sites[i].frames) {
      auto [it, added] = seen.emplace(std::make_tuple(f.function_name, f.script_name, f.line, f.column), LocationId{});
      if (added) it->second = locations.Of(f);
      site_locations[i].push_back(it->second);
    }
  }
  SymbolizeResult result = Symbolize(profile, provider);
  for (size_t i = 0; i < report.sites.size(); ++i) {
    std::vector<Frame>& frames = report.sites[i].frames;
    for (size_t k = 0; k < frames.size(); ++k) {
      const Line& line = profile.location(site_locations[i][k]).lines.front();
      const Function& fn = profile.function(line.function);
      if (fn.system_name == StringId{0} && profile.str(fn.filename) == frames[k].script_name &&
          line.line == frames[k].line) {
        continue;  // unmapped: the frame as V8 named it
      }
      frames[k].function_name = std::string(profile.str(fn.name));
      frames[k].script_name = std::string(profile.str(fn.filename));
      frames[k].line = static_cast<int>(line.line);
      frames[k].column = static_cast<int>(line.column);
    }
  }
  return result;
}

}  // namespace heapprof
