// Per-function totals and the `top` table: what `pprof -top` shows, computed
// from the Profile model so no pprof is needed to read a profile.
#include "heapprof/core/report.h"
#include "heapprof/core/file_labels.h"
#include "heapprof/core/terminal_text.h"
#include "heapprof/core/text.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <tuple>

namespace heapprof {
namespace {

using FunctionKey = std::tuple<std::string, std::string, int64_t>;

// The function a location's line stands for, as shown to a reader. Locations
// without lines (unsymbolized foreign profiles) are named by their address.
FunctionKey KeyOf(const Profile& p, const Location& loc, size_t line_index) {
  if (line_index >= loc.lines.size()) return {fmt::format("0x{:x}", loc.address), "", 0};
  const Function& f = p.function(loc.lines[line_index].function);
  return {std::string(p.str(f.name)), std::string(p.str(f.filename)), f.start_line};
}

std::string Percent(int64_t value, int64_t total) {
  if (total == 0) return "-";
  return fmt::format("{:.1f}%", 100.0 * static_cast<double>(value) / static_cast<double>(total));
}

// Above this many points of sampling error a share cannot rank functions.
constexpr double kRankablePoints = 10;

// The legend of the ± column, or the warning that a sample type has too few
// samples for its shares to mean much.
std::string SamplingNote(std::string_view sample_type, const SampledValue& total, int64_t period,
                         double widest_points) {
  if (widest_points <= kRankablePoints) {
    return fmt::format("  (± is the 95 % sampling error of a share, in points)\n");
  }
  // About 400 samples put a 50 % share within ±5 points.
  int64_t suggested =
      IntervalForSamples(static_cast<double>(period) * total.samples, 400, 1024, std::max<int64_t>(1024, period / 2));
  return fmt::format(
      "  {}: {} sample{}; shares are ±{:.0f} points, too few to rank functions; rerun with "
      "--interval {} or more requests\n",
      sample_type, total.samples, total.samples == 1 ? "" : "s", widest_points, FormatInterval(suggested));
}

}  // namespace

bool IsUserCodeFile(std::string_view filename) {
  return !filename.empty() && !filename.starts_with("heapprof:") && !filename.starts_with("node:") &&
         !filename.starts_with("internal/");
}

std::vector<FunctionTotal> FunctionTotals(const Profile& profile, int sample_index, bool sort_by_cum, FrameView view) {
  std::map<FunctionKey, FunctionTotal> totals;
  auto entry = [&](const FunctionKey& key) -> FunctionTotal& {
    auto [it, inserted] = totals.try_emplace(key);
    if (inserted) {
      it->second.name = std::get<0>(key);
      it->second.filename = std::get<1>(key);
      it->second.start_line = std::get<2>(key);
    }
    return it->second;
  };
  if (sample_index < 0 || static_cast<size_t>(sample_index) >= profile.sample_types.size()) return {};

  std::optional<SamplingModel> model = SamplingModel::For(profile, sample_index);
  std::set<FunctionKey> seen;
  std::vector<FunctionKey> frames;  // one sample's stack, leaf first, inlined lines expanded
  for (const Sample& sample : profile.samples) {
    if (static_cast<size_t>(sample_index) >= sample.values.size()) continue;
    int64_t value = sample.values[sample_index];
    if (value == 0) continue;
    SampledValue sampling = model ? model->Row(sample) : SampledValue{};
    if (sample.locations.empty()) {
      // Keep flat% summing to 100 % even for samples without a stack.
      FunctionTotal& t = entry({"(no stack)", "", 0});
      t.flat += value;
      t.cum += value;
      t.flat_sampling.Add(sampling);
      t.cum_sampling.Add(sampling);
      continue;
    }
    frames.clear();
    for (LocationId id : sample.locations) {
      const Location& loc = profile.location(id);
      size_t lines = std::max<size_t>(loc.lines.size(), 1);
      for (size_t i = 0; i < lines; ++i) frames.push_back(KeyOf(profile, loc, i));
    }
    size_t leaf = 0;
    if (view == FrameView::kUserCode) {
      auto first = [&](auto&& pred) {
        for (size_t i = 0; i < frames.size(); ++i) {
          if (pred(std::get<1>(frames[i]))) return i;
        }
        return frames.size();
      };
      leaf = first([](const std::string& file) { return IsUserCodeFile(file); });
      if (leaf == frames.size()) leaf = first([](const std::string& file) { return !file.empty(); });
      if (leaf == frames.size()) leaf = 0;
    }
    seen.clear();
    for (size_t i = leaf; i < frames.size(); ++i) {
      FunctionTotal& t = entry(frames[i]);
      if (i == leaf) {
        t.flat += value;  // the innermost line of the leaf location allocated
        t.flat_sampling.Add(sampling);
      }
      if (seen.insert(frames[i]).second) {  // recursion counts once
        t.cum += value;
        t.cum_sampling.Add(sampling);
      }
    }
  }

  std::vector<FunctionTotal> out;
  out.reserve(totals.size());
  for (auto& [key, total] : totals) out.push_back(std::move(total));
  // By magnitude (diff profiles can be negative), then the other column, then name.
  std::stable_sort(out.begin(), out.end(), [sort_by_cum](const FunctionTotal& a, const FunctionTotal& b) {
    int64_t a1 = std::llabs(sort_by_cum ? a.cum : a.flat), b1 = std::llabs(sort_by_cum ? b.cum : b.flat);
    if (a1 != b1) return a1 > b1;
    int64_t a2 = std::llabs(sort_by_cum ? a.flat : a.cum), b2 = std::llabs(sort_by_cum ? b.flat : b.cum);
    if (a2 != b2) return a2 > b2;
    return std::tie(a.name, a.filename, a.start_line) < std::tie(b.name, b.filename, b.start_line);
  });
  return out;
}

Result<int> ResolveSampleIndex(const Profile& profile, const std::string& name) {
  int count = static_cast<int>(profile.sample_types.size());
  if (count == 0) return Error(ErrorCode::kInvalidArgument, "the profile has no sample types");
  if (name.empty()) {
    int index = profile.FindSampleType(profile.str(profile.default_sample_type));
    if (profile.default_sample_type != StringId{0} && index >= 0) return index;
    return count - 1;  // pprof's choice when there is no default
  }
  if (int index = profile.FindSampleType(name); index >= 0) return index;
  if (std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; }) && name.size() < 4) {
    int index = std::stoi(name);
    if (index < count) return index;
  }
  std::string types;
  for (const ValueType& t : profile.sample_types) {
    if (!types.empty()) types += ", ";
    types += profile.str(t.type);
  }
  return Error(ErrorCode::kInvalidArgument,
               fmt::format("unknown sample type \"{}\"; this profile has: {}", name, types));
}

std::string FormatValue(int64_t value, std::string_view unit) {
  std::string sign = value < 0 ? "-" : "";
  // Magnitude as unsigned so INT64_MIN does not overflow.
  uint64_t magnitude = value < 0 ? 0 - static_cast<uint64_t>(value) : static_cast<uint64_t>(value);
  double v = static_cast<double>(magnitude);
  if (unit == "bytes") {
    static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    if (magnitude < 1024) return fmt::format("{}{} B", sign, magnitude);
    size_t u = 0;
    while (v >= 1024 && u + 1 < std::size(kUnits)) {
      v /= 1024;
      ++u;
    }
    return fmt::format("{}{:.{}f} {}", sign, v, v < 100 ? 1 : 0, kUnits[u]);
  }
  if (unit == "nanoseconds") {
    if (magnitude < 1000) return fmt::format("{}{}ns", sign, magnitude);
    if (magnitude < 1000000) return fmt::format("{}{:.1f}us", sign, v / 1e3);
    if (magnitude < 1000000000) return fmt::format("{}{:.1f}ms", sign, v / 1e6);
    return fmt::format("{}{:.2f}s", sign, v / 1e9);
  }
  if (unit == "count" || unit == "objects" || unit == "samples" || unit.empty()) {
    if (magnitude < 10000) return fmt::format("{}{}", sign, magnitude);
    static constexpr const char* kUnits[] = {"", "k", "M", "G", "T", "P", "E"};
    size_t u = 0;
    while (v >= 1000 && u + 1 < std::size(kUnits)) {
      v /= 1000;
      ++u;
    }
    return fmt::format("{}{:.{}f}{}", sign, v, v < 100 ? 1 : 0, kUnits[u]);
  }
  return fmt::format("{}{} {}", sign, magnitude, unit);
}

std::string FormatTopTable(const Profile& profile, const TopOptions& options) {
  int index = options.sample_index;
  if (index < 0 || static_cast<size_t>(index) >= profile.sample_types.size()) {
    return fmt::format("(no sample type #{} in this profile)\n", index);
  }
  std::string_view type = profile.str(profile.sample_types[index].type);
  std::string_view unit = profile.str(profile.sample_types[index].unit);
  std::vector<FunctionTotal> totals = FunctionTotals(profile, index, options.sort_by_cum, options.view);
  int64_t total = profile.Total(index);
  const internal::FileLabels labels = internal::FileLabels::Of(profile);
  size_t rows = std::min(options.rows, totals.size());
  std::optional<SamplingModel> model = SamplingModel::For(profile, index);

  std::string sampled;
  if (model && total > 0) {
    const SampledValue& all = model->total();
    Interval range = ValueInterval(all, model->unseen_weight());
    sampled = fmt::format(" ±{} from {} sample{}",
                          FormatValue(static_cast<int64_t>(std::llround(range.HalfWidth(all.value))), unit),
                          all.samples, all.samples == 1 ? "" : "s");
  }
  std::string out =
      fmt::format("{}: total {}{}, {} function{}; top {} by {}{}\n", type, FormatValue(total, unit), sampled,
                  totals.size(), totals.size() == 1 ? "" : "s", rows, options.sort_by_cum ? "cumulative" : "flat",
                  options.view == FrameView::kUserCode ? " (your code)" : "");
  if (options.view == FrameView::kUserCode) {
    out += "  (--user-code: built-ins and heapprof:runtime frames are charged to their nearest user-code caller)\n";
  }
  if (rows == 0) return out;

  // A share and, when the profile says how it was sampled, its 95 % error in points.
  double widest = 0;
  auto share = [&](int64_t value, const SampledValue& sampling) {
    std::string text = Percent(value, total);
    if (!model || total == 0) return text;
    double r = static_cast<double>(value) / static_cast<double>(total);
    double half = 100 * ShareInterval(sampling, model->total()).HalfWidth(r);
    widest = std::max(widest, half);
    return fmt::format("{} ±{:.1f}", text, half);
  };
  std::vector<std::string> flat(rows), cum(rows), flat_share(rows), cum_share(rows);
  size_t flat_width = 4, cum_width = 3, flat_share_width = 6, cum_share_width = 6;
  for (size_t i = 0; i < rows; ++i) {
    flat[i] = FormatValue(totals[i].flat, unit);
    cum[i] = FormatValue(totals[i].cum, unit);
    flat_share[i] = share(totals[i].flat, totals[i].flat_sampling);
    cum_share[i] = share(totals[i].cum, totals[i].cum_sampling);
    flat_width = std::max(flat_width, flat[i].size());
    cum_width = std::max(cum_width, cum[i].size());
    flat_share_width = std::max(flat_share_width, flat_share[i].size());
    cum_share_width = std::max(cum_share_width, cum_share[i].size());
  }
  out += fmt::format("  {:>{}}  {:>{}}  {:>6}  {:>{}}  {:>{}}  {}\n", "flat", flat_width, "flat%", flat_share_width,
                     "sum%", "cum", cum_width, "cum%", cum_share_width, "function");
  int64_t running = 0;
  for (size_t i = 0; i < rows; ++i) {
    const FunctionTotal& t = totals[i];
    running += t.flat;
    std::string where;
    if (!t.filename.empty()) {
      where = t.start_line > 0 ? fmt::format("  {}:{}", labels.Label(t.filename), t.start_line)
                               : "  " + labels.Label(t.filename);
    }
    out += fmt::format("  {:>{}}  {:>{}}  {:>6}  {:>{}}  {:>{}}  {}{}\n", flat[i], flat_width, flat_share[i],
                       flat_share_width, Percent(running, total), cum[i], cum_width, cum_share[i], cum_share_width,
                       TerminalSafe(labels.FunctionName(t.name, t.filename)), TerminalSafe(where));
  }
  if (model) {
    out += SamplingNote(type, model->total(), profile.period, widest);
  } else {
    out += fmt::format("  (no sampling error: {})\n", SamplingModel::Unavailable(profile, index));
  }
  return out;
}

std::string FormatInterval(int64_t bytes) {
  if (bytes >= (1 << 20) && bytes % (1 << 20) == 0) return fmt::format("{}MiB", bytes >> 20);
  if (bytes >= 1024 && bytes % 1024 == 0) return fmt::format("{}KiB", bytes >> 10);
  return fmt::format("{}B", bytes);
}

SamplingCheck CheckSampling(const Profile& profile, int index, size_t rows) {
  SamplingCheck check;
  std::optional<SamplingModel> model = SamplingModel::For(profile, index);
  int64_t total = index >= 0 && static_cast<size_t>(index) < profile.sample_types.size() ? profile.Total(index) : 0;
  if (!model || total <= 0) return check;
  check.sampled = true;
  check.samples = model->total().samples;
  std::vector<FunctionTotal> totals = FunctionTotals(profile, index);
  for (size_t i = 0; i < std::min(rows, totals.size()); ++i) {
    for (auto [value, sampling] :
         {std::pair{totals[i].flat, totals[i].flat_sampling}, std::pair{totals[i].cum, totals[i].cum_sampling}}) {
      double r = static_cast<double>(value) / static_cast<double>(total);
      check.widest_points = std::max(check.widest_points, 100 * ShareInterval(sampling, model->total()).HalfWidth(r));
    }
  }
  check.enough = check.widest_points <= kRankablePoints;
  check.suggested_interval = IntervalForSamples(static_cast<double>(profile.period) * check.samples, 400, 1024,
                                                std::max<int64_t>(1024, profile.period / 2));
  return check;
}

std::string TooFewSamples(const Profile& profile, int index, size_t rows) {
  SamplingCheck check = CheckSampling(profile, index, rows);
  if (check.enough) return "";
  int64_t n = std::llround(check.samples);
  return fmt::format("{}: {} sample{}; shares are ±{:.0f} points, too few to rank functions",
                     profile.str(profile.sample_types[index].type), n, n == 1 ? "" : "s", check.widest_points);
}

std::string WhyNoSamplingError(const Profile& profile, int sample_index) {
  return SamplingModel::Unavailable(profile, sample_index);
}

std::string FormatSummaryLine(const Profile& profile, int index, const SummaryOptions& options) {
  if (index < 0 || static_cast<size_t>(index) >= profile.sample_types.size()) return "";
  std::vector<FunctionTotal> mine = FunctionTotals(profile, index, false, FrameView::kUserCode);
  int64_t total = profile.Total(index);
  if (mine.empty() || total <= 0 || mine[0].flat <= 0) return "";
  const internal::FileLabels labels = internal::FileLabels::Of(profile);
  std::optional<SamplingModel> model = SamplingModel::For(profile, index);
  std::string_view type = profile.str(profile.sample_types[index].type);
  std::string_view unit = profile.str(profile.sample_types[index].unit);
  const bool inuse = type.starts_with("inuse") || type == "objects" || type == "space";
  const char* verb = inuse ? "holds" : "allocated";

  double widest = 0;
  auto share = [&](const FunctionTotal& t) {
    std::string text = Percent(t.flat, total);
    if (!model) return text;
    double r = static_cast<double>(t.flat) / static_cast<double>(total);
    double half = 100 * ShareInterval(t.flat_sampling, model->total()).HalfWidth(r);
    widest = std::max(widest, half);
    return fmt::format("{} ±{:.1f}", text, half);
  };
  auto named = [&](const FunctionTotal& t) {
    std::string name = labels.FunctionName(t.name, t.filename);
    if (t.filename.empty()) return name;
    return t.start_line > 0 ? fmt::format("{} ({}:{})", name, labels.Label(t.filename), t.start_line)
                            : fmt::format("{} ({})", name, labels.Label(t.filename));
  };
  const FunctionTotal& top = mine[0];
  std::string line;
  if (IsUserCodeFile(top.filename)) {
    line = fmt::format("{} {} {} of {} ({})", named(top), verb, share(top), FormatValue(total, unit), type);
    // What of it V8's built-ins and the runtime allocated on its behalf.
    int64_t own = 0;
    for (const FunctionTotal& t : FunctionTotals(profile, index)) {
      if (t.name == top.name && t.filename == top.filename && t.start_line == top.start_line) own = t.flat;
    }
    if (top.flat > own && top.flat > 0) {
      line += fmt::format(", {} of that through the built-ins and runtime functions it calls",
                          Percent(top.flat - own, top.flat));
    }
  } else {
    line = fmt::format("{} itself {} the most, outside any user-code frame: {} {} of {} ({})", options.runtime, verb,
                       named(top), share(top), FormatValue(total, unit), type);
    if (options.requests > 0) {
      line += fmt::format(", about {}{} per request", FormatValue(top.flat / options.requests, unit),
                          unit == "bytes" ? "" : " objects");
    }
    for (const FunctionTotal& t : mine) {
      if (!IsUserCodeFile(t.filename) || t.flat <= 0) continue;
      line += fmt::format("; the top user function: {} {}", named(t), share(t));
      break;
    }
  }
  if (widest > kRankablePoints) {
    line += fmt::format(" (shares are ±{:.0f} points: too few samples to be sure)", widest);
  }
  return TerminalSafe(line) + ".";
}

}  // namespace heapprof
