#include "heapprof/core/diff.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <map>
#include <optional>
#include <tuple>

#include <fmt/format.h>

#include "heapprof/core/call_tree.h"
#include "heapprof/core/file_labels.h"
#include "heapprof/core/flamegraph_page.h"
#include "heapprof/core/pprof.h"
#include "heapprof/core/report.h"
#include "heapprof/core/terminal_text.h"

namespace heapprof {
namespace {

struct Resolved {
  int base_index = -1;
  int new_index = -1;
  std::string type;
  std::string unit;
};

Result<Resolved> ResolveBoth(const Profile& base, const Profile& next, const std::string& sample_type) {
  if (Status s = ValidateProfile(base); !s.ok()) return Error(s.code(), "base profile: " + s.message());
  if (Status s = ValidateProfile(next); !s.ok()) return Error(s.code(), "new profile: " + s.message());
  if (base.samples.empty()) return Error(ErrorCode::kInvalidArgument, "base profile has no samples (empty profile)");
  if (next.samples.empty()) return Error(ErrorCode::kInvalidArgument, "new profile has no samples (empty profile)");
  Result<int> index = ResolveSampleIndex(next, sample_type);
  if (!index.ok()) return Error(index.status().code(), "new profile: " + index.status().message());
  Resolved r;
  r.new_index = *index;
  r.type = std::string(next.str(next.sample_types[r.new_index].type));
  r.unit = std::string(next.str(next.sample_types[r.new_index].unit));
  r.base_index = base.FindSampleType(r.type);
  if (r.base_index < 0) {
    return Error(ErrorCode::kInvalidArgument, fmt::format("base profile has no sample type \"{}\"", r.type));
  }
  std::string_view base_unit = base.str(base.sample_types[r.base_index].unit);
  if (base_unit != r.unit) {
    return Error(ErrorCode::kInvalidArgument,
                 fmt::format("sample type \"{}\" is in {} in the base profile but in {} in the new one", r.type,
                             base_unit, r.unit));
  }
  return r;
}

std::string Where(const FunctionDelta& d) {
  if (d.filename.empty()) return "";
  const std::string& label = d.file_label.empty() ? d.filename : d.file_label;
  return d.start_line > 0 ? fmt::format(" ({}:{})", label, d.start_line) : fmt::format(" ({})", label);
}

std::string Named(const FunctionDelta& d) { return (d.display_name.empty() ? d.name : d.display_name) + Where(d); }

std::string Signed(int64_t value, const std::string& unit) {
  std::string text = FormatValue(value, unit);
  return value > 0 ? "+" + text : text;
}

// 95 % half-width of the difference of two independent estimates.
double ChangeNoise(const SampledValue& a, const SampledValue& b, double confidence) {
  return NormalQuantile(confidence) * std::sqrt(a.variance + b.variance);
}

// Marks each function's change as beyond the sampling noise of both profiles
// or not, with Bonferroni's correction for testing all of them at once.
void TestChanges(const Profile& base, int base_index, const Profile& next, int new_index, double confidence,
                 ProfileDiff& diff) {
  std::optional<SamplingModel> b = SamplingModel::For(base, base_index);
  std::optional<SamplingModel> n = SamplingModel::For(next, new_index);
  diff.confidence = confidence;
  if (!b || !n) return;
  diff.sampled = true;
  diff.tested = diff.functions.size();
  diff.total_noise = ChangeNoise(b->total(), n->total(), confidence);
  const double alpha = (1 - confidence) / static_cast<double>(std::max<size_t>(1, diff.tested));
  for (FunctionDelta& d : diff.functions) {
    d.p_value = ChangePValue(d.base_sampling, b->unseen_weight(), d.new_sampling, n->unseen_weight());
    d.noise = ChangeNoise(d.base_sampling, d.new_sampling, confidence);
    d.significant = d.p_value < alpha;
  }
}

}  // namespace

Result<ProfileDiff> DiffProfiles(const Profile& base, const Profile& next, const DiffOptions& options) {
  HEAPPROF_ASSIGN_OR_RETURN(Resolved r, ResolveBoth(base, next, options.sample_type));

  ProfileDiff diff;
  diff.sample_type = r.type;
  diff.unit = r.unit;
  diff.base_total = base.Total(r.base_index);
  diff.new_total = next.Total(r.new_index);
  diff.sort_by_cum = options.sort_by_cum;

  // Functions match across profiles by what a reader sees: name, file, line.
  std::map<std::tuple<std::string, std::string, int64_t>, FunctionDelta> merged;
  auto entry = [&](const FunctionTotal& t) -> FunctionDelta& {
    auto [it, inserted] = merged.try_emplace(std::make_tuple(t.name, t.filename, t.start_line));
    if (inserted) {
      it->second.name = t.name;
      it->second.filename = t.filename;
      it->second.start_line = t.start_line;
    }
    return it->second;
  };
  const bool cum = options.sort_by_cum;
  for (const FunctionTotal& t : FunctionTotals(base, r.base_index)) {
    FunctionDelta& d = entry(t);
    d.base_flat = t.flat;
    d.base_cum = t.cum;
    d.base_sampling = cum ? t.cum_sampling : t.flat_sampling;
  }
  for (const FunctionTotal& t : FunctionTotals(next, r.new_index)) {
    FunctionDelta& d = entry(t);
    d.new_flat = t.flat;
    d.new_cum = t.cum;
    d.new_sampling = cum ? t.cum_sampling : t.flat_sampling;
  }
  diff.functions.reserve(merged.size());
  const internal::FileLabels labels = internal::FileLabels::Of(std::vector<const Profile*>{&base, &next});
  for (auto& [key, d] : merged) {
    d.file_label = labels.Label(d.filename);
    d.display_name = labels.FunctionName(d.name, d.filename);
    diff.functions.push_back(std::move(d));
  }
  TestChanges(base, r.base_index, next, r.new_index, options.confidence, diff);
  std::stable_sort(diff.functions.begin(), diff.functions.end(), [cum](const FunctionDelta& a, const FunctionDelta& b) {
    int64_t a1 = cum ? a.cum_delta() : a.flat_delta(), b1 = cum ? b.cum_delta() : b.flat_delta();
    if (a1 != b1) return a1 > b1;
    int64_t a2 = cum ? a.flat_delta() : a.cum_delta(), b2 = cum ? b.flat_delta() : b.cum_delta();
    if (a2 != b2) return a2 > b2;
    return std::tie(a.name, a.filename, a.start_line) < std::tie(b.name, b.filename, b.start_line);
  });
  return diff;
}

std::string FormatDiffTable(const ProfileDiff& diff, size_t rows) {
  const std::string& unit = diff.unit;
  int64_t change = diff.new_total - diff.base_total;
  std::string out = fmt::format("{}: base {} -> new {} ({}", diff.sample_type, FormatValue(diff.base_total, unit),
                                FormatValue(diff.new_total, unit), Signed(change, unit));
  if (diff.base_total > 0) {
    out += fmt::format(", {:+.1f}%", 100.0 * static_cast<double>(change) / static_cast<double>(diff.base_total));
  }
  out += ")\n";
  if (diff.sampled) {
    bool beyond = std::abs(static_cast<double>(change)) > diff.total_noise;
    out += fmt::format("  the totals' sampling noise: ±{} ({:.0f} % confidence); the change is {} it\n",
                       FormatValue(std::llround(diff.total_noise), unit), 100 * diff.confidence,
                       beyond ? "beyond" : "within");
  }

  auto key = [&](const FunctionDelta& d) { return diff.sort_by_cum ? d.cum_delta() : d.flat_delta(); };
  std::vector<const FunctionDelta*> grew, shrank;
  const FunctionDelta* largest_noise = nullptr;  // the biggest change the noise explains
  size_t within_noise = 0;
  for (const FunctionDelta& d : diff.functions) {
    if (key(d) == 0) continue;
    if (!d.significant) {
      ++within_noise;
      if (!largest_noise || std::llabs(key(d)) > std::llabs(key(*largest_noise))) largest_noise = &d;
      continue;
    }
    if (key(d) > 0 && grew.size() < rows) grew.push_back(&d);
  }
  for (auto it = diff.functions.rbegin(); it != diff.functions.rend(); ++it) {
    if (key(*it) < 0 && it->significant && shrank.size() < rows) shrank.push_back(&*it);
  }

  const std::string by = diff.sort_by_cum ? "cumulative" : "flat";
  const std::string qualifier =
      diff.sampled
          ? fmt::format(" beyond sampling noise (by {} change; {:.0f} % confidence for all {} functions together)", by,
                        100 * diff.confidence, diff.tested)
          : fmt::format(" (by {} change)", by);
  auto section = [&](const char* title, const std::vector<const FunctionDelta*>& list) {
    out += fmt::format("\n{}{}:\n", title, qualifier);
    if (list.empty()) {
      out += "  (none)\n";
      return;
    }
    std::vector<std::vector<std::string>> cells;
    std::vector<std::string> head{"flat delta", "flat base", "flat new", "cum delta", "cum new"};
    if (diff.sampled) head.insert(head.begin() + (diff.sort_by_cum ? 4 : 1), "±noise");
    std::vector<size_t> width(head.size());
    for (size_t c = 0; c < head.size(); ++c) width[c] = head[c].size();
    for (const FunctionDelta* d : list) {
      std::vector<std::string> row{Signed(d->flat_delta(), unit), FormatValue(d->base_flat, unit),
                                   FormatValue(d->new_flat, unit), Signed(d->cum_delta(), unit),
                                   FormatValue(d->new_cum, unit)};
      if (diff.sampled) {
        row.insert(row.begin() + (diff.sort_by_cum ? 4 : 1), "±" + FormatValue(std::llround(d->noise), unit));
      }
      for (size_t c = 0; c < head.size(); ++c) width[c] = std::max(width[c], row[c].size());
      cells.push_back(std::move(row));
    }
    out += "  ";
    for (size_t c = 0; c < head.size(); ++c) out += fmt::format("{:>{}}  ", head[c], width[c]);
    out += "function\n";
    for (size_t i = 0; i < list.size(); ++i) {
      out += "  ";
      for (size_t c = 0; c < head.size(); ++c) out += fmt::format("{:>{}}  ", cells[i][c], width[c]);
      out += TerminalSafe(Named(*list[i])) + "\n";
    }
  };
  section("Grew", grew);
  section("Shrank", shrank);
  if (!diff.sampled) {
    out += "\n(the profiles do not say how they were sampled, so every change is listed, noise or not)\n";
  } else if (within_noise > 0) {
    out += fmt::format(
        "\nWithin sampling noise: {} function{} changed no more than sampling explains; the largest: "
        "{} {} ±{}\n",
        within_noise, within_noise == 1 ? "" : "s", TerminalSafe(Named(*largest_noise)),
        Signed(key(*largest_noise), unit), FormatValue(std::llround(largest_noise->noise), unit));
  }
  return out;
}

Result<std::string> RenderDiffFlamegraphHtml(const Profile& base, const Profile& next, const DiffOptions& options,
                                             const std::string& title) {
  HEAPPROF_ASSIGN_OR_RETURN(Resolved r, ResolveBoth(base, next, options.sample_type));
  internal::CallTreeBuilder builder(2, 1);
  if (Status s = builder.AddProfile(base, 0, {r.base_index}); !s.ok())
    return Error(s.code(), "base profile: " + s.message());
  if (Status s = builder.AddProfile(next, 1, {r.new_index}); !s.ok())
    return Error(s.code(), "new profile: " + s.message());

  internal::PageInfo info;
  info.title = title.empty() ? fmt::format("heapprof diff: {}", r.type) : title;
  info.sample_types = {{r.type, r.unit}};
  info.diff = true;
  for (const std::string& line : internal::ProfileDetails(base)) info.details.push_back("base " + line);
  for (const std::string& line : internal::ProfileDetails(next)) info.details.push_back("new " + line);
  return internal::RenderFlamegraphPage(builder.Take(), info);
}

}  // namespace heapprof
