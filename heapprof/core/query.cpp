// Profile queries for assertions: pattern-selected totals, heaviest stacks,
// retained bytes. Each sample is counted once however many frames match.
#include "heapprof/core/query.h"
#include "heapprof/core/file_labels.h"
#include "heapprof/core/text.h"

#include <fmt/format.h>
#include <fnmatch.h>

#include <algorithm>
#include <map>
#include <optional>
#include <regex>

#include "heapprof/core/report.h"
#include "heapprof/core/terminal_text.h"

namespace heapprof {

struct FrameMatcher::Impl {
  FrameFilter filter;
  std::optional<std::regex> function_re;  // set for non-empty regex patterns
  std::optional<std::regex> script_re;

  bool MatchOne(const std::string& pattern, const std::optional<std::regex>& re, std::string_view text) const {
    if (pattern.empty()) return true;
    if (filter.syntax == PatternSyntax::kGlob) {
      // fnmatch needs NUL-terminated text.
      return fnmatch(pattern.c_str(), std::string(text).c_str(), 0) == 0;
    }
    return std::regex_search(text.begin(), text.end(), *re);
  }
};

namespace {

// std::regex reports bad patterns by throwing; turn that into a value here.
Result<std::optional<std::regex>> CompileRegex(const std::string& pattern, const char* what) {
  if (pattern.empty()) return std::optional<std::regex>();
  try {
    return std::optional<std::regex>(std::regex(pattern, std::regex::ECMAScript));
  } catch (const std::regex_error& e) {
    return Error(ErrorCode::kInvalidArgument, fmt::format("bad {} pattern /{}/: {}", what, pattern, e.what()));
  }
}

bool ValidIndex(const Profile& p, const Sample& s, int index) {
  return index >= 0 && static_cast<size_t>(index) < p.sample_types.size() &&
         static_cast<size_t>(index) < s.values.size();
}

bool PassesThrough(const Profile& p, const Sample& s, const FrameMatcher& m) {
  return std::any_of(s.locations.begin(), s.locations.end(), [&](LocationId id) { return m.Matches(p, id); });
}

std::string FrameText(const Profile& p, const internal::FileLabels& labels, LocationId id) {
  const Location& loc = p.location(id);
  if (loc.lines.empty()) return fmt::format("0x{:x}", loc.address);
  const Function& f = p.function(loc.lines.front().function);
  std::string name = labels.FunctionName(p.str(f.name), p.str(f.filename));
  if (name.empty()) name = "(anonymous)";
  // Anonymous functions already carry their position in the name.
  if (p.str(f.filename).empty() || name.starts_with("(anonymous ")) return name;
  return fmt::format("{} ({}:{})", name, labels.Label(p.str(f.filename)), f.start_line);
}

}  // namespace

FrameMatcher::FrameMatcher(std::shared_ptr<const Impl> impl) : impl_(std::move(impl)) {}

Result<FrameMatcher> FrameMatcher::Compile(const FrameFilter& filter) {
  auto impl = std::make_shared<Impl>();
  impl->filter = filter;
  if (filter.syntax == PatternSyntax::kRegex) {
    HEAPPROF_ASSIGN_OR_RETURN(auto fn, CompileRegex(filter.function, "function"));
    HEAPPROF_ASSIGN_OR_RETURN(auto script, CompileRegex(filter.script, "script"));
    impl->function_re = std::move(fn);
    impl->script_re = std::move(script);
  }
  return FrameMatcher(std::move(impl));
}

bool FrameMatcher::Matches(const Profile& profile, const Function& function) const {
  return impl_->MatchOne(impl_->filter.function, impl_->function_re, profile.str(function.name)) &&
         impl_->MatchOne(impl_->filter.script, impl_->script_re, profile.str(function.filename));
}

bool FrameMatcher::Matches(const Profile& profile, LocationId location) const {
  const Location& loc = profile.location(location);
  if (loc.lines.empty()) return false;
  return Matches(profile, profile.function(loc.lines.front().function));
}

std::string FrameMatcher::Describe() const {
  const FrameFilter& f = impl_->filter;
  auto quote = [&](const std::string& p) {
    return f.syntax == PatternSyntax::kRegex ? fmt::format("/{}/", p) : fmt::format("'{}'", p);
  };
  if (f.function.empty() && f.script.empty()) return "any function";
  if (f.script.empty()) return fmt::format("functions matching {}", quote(f.function));
  if (f.function.empty()) return fmt::format("functions in scripts matching {}", quote(f.script));
  return fmt::format("functions matching {} in scripts matching {}", quote(f.function), quote(f.script));
}

Result<int64_t> TotalOf(const Profile& profile, std::string_view sample_type) {
  int index = profile.FindSampleType(sample_type);
  if (index < 0) {
    return Error(ErrorCode::kInvalidArgument, fmt::format("the profile has no sample type '{}'", sample_type));
  }
  return profile.Total(index);
}

MatchTotals TotalForFrames(const Profile& profile, const FrameMatcher& matcher, int sample_index) {
  MatchTotals totals;
  for (const Sample& s : profile.samples) {
    if (!ValidIndex(profile, s, sample_index) || s.locations.empty()) continue;
    int64_t value = s.values[sample_index];
    if (matcher.Matches(profile, s.locations.front())) totals.flat += value;
    if (PassesThrough(profile, s, matcher)) {
      totals.cum += value;
      ++totals.samples;
    }
  }
  return totals;
}

Result<MatchTotals> TotalForFrames(const Profile& profile, const FrameFilter& filter, int sample_index) {
  HEAPPROF_ASSIGN_OR_RETURN(auto matcher, FrameMatcher::Compile(filter));
  return TotalForFrames(profile, matcher, sample_index);
}

std::vector<StackTotal> TopStacks(const Profile& profile, int sample_index, size_t n, const FrameMatcher* through) {
  std::map<std::vector<LocationId>, int64_t> by_stack;
  for (const Sample& s : profile.samples) {
    if (!ValidIndex(profile, s, sample_index) || s.values[sample_index] == 0) continue;
    if (through != nullptr && !PassesThrough(profile, s, *through)) continue;
    by_stack[s.locations] += s.values[sample_index];
  }
  std::vector<StackTotal> stacks;
  stacks.reserve(by_stack.size());
  for (auto& [locations, value] : by_stack) stacks.push_back({locations, value});
  // Heaviest first; ties keep the map's (stack) order so output is stable.
  std::stable_sort(stacks.begin(), stacks.end(),
                   [](const StackTotal& a, const StackTotal& b) { return a.value > b.value; });
  if (stacks.size() > n) stacks.resize(n);
  return stacks;
}

std::string FormatStacks(const Profile& profile, const std::vector<StackTotal>& stacks, std::string_view unit,
                         size_t max_frames) {
  std::vector<std::string> values;
  size_t width = 0;
  for (const StackTotal& s : stacks) {
    values.push_back(FormatValue(s.value, unit));
    width = std::max(width, values.back().size());
  }
  std::string out;
  const internal::FileLabels labels = internal::FileLabels::Of(profile);
  for (size_t i = 0; i < stacks.size(); ++i) {
    out += fmt::format("  {:>{}}  ", values[i], width);
    const auto& locs = stacks[i].locations;
    if (locs.empty()) out += "(no stack)";
    for (size_t j = 0; j < locs.size() && j < max_frames; ++j) {
      if (j > 0) out += " <- ";
      out += TerminalSafe(FrameText(profile, labels, locs[j]));
    }
    if (locs.size() > max_frames) out += fmt::format(" <- ... ({} more)", locs.size() - max_frames);
    out += '\n';
  }
  return out;
}

Result<int64_t> RetainedBy(const Profile& profile, const FrameFilter& filter) {
  int index = profile.FindSampleType("inuse_space");
  if (index < 0) return Error(ErrorCode::kInvalidArgument, "the profile has no inuse_space sample type");
  HEAPPROF_ASSIGN_OR_RETURN(auto totals, TotalForFrames(profile, filter, index));
  return totals.cum;
}

}  // namespace heapprof
