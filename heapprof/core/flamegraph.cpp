#include "heapprof/core/flamegraph.h"

#include <cmath>
#include <ctime>
#include <string_view>
#include <unordered_map>

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "heapprof/core/call_tree.h"
#include "heapprof/core/file_labels.h"
#include "heapprof/core/flamegraph_assets.h"
#include "heapprof/core/flamegraph_page.h"
#include "heapprof/core/pprof.h"
#include "heapprof/core/report.h"
#include "heapprof/core/text.h"

namespace heapprof {
namespace internal {
namespace {

// JSON that is safe inside <script>: '<' only appears inside JSON strings,
// where \u003c means the same, so no "</script>" can end the element early.
std::string ScriptSafeJson(const nlohmann::json& data) {
  std::string json = data.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string out;
  out.reserve(json.size() + 64);
  for (char c : json) {
    if (c == '<') {
      out += "\\u003c";
    } else {
      out += c;
    }
  }
  return out;
}

// Replaces each {{name}} of the template once, scanning only the template
// (never the inserted text, which may contain anything).
std::string Fill(std::string_view tmpl, const std::vector<std::pair<std::string_view, std::string_view>>& values) {
  std::string out;
  size_t pos = 0;
  while (true) {
    size_t open = tmpl.find("{{", pos);
    if (open == std::string_view::npos) break;
    size_t close = tmpl.find("}}", open + 2);
    if (close == std::string_view::npos) break;
    std::string_view name = tmpl.substr(open + 2, close - open - 2);
    const std::string_view* value = nullptr;
    for (const auto& [key, text] : values) {
      if (key == name) value = &text;
    }
    out.append(tmpl.substr(pos, open - pos));
    if (value != nullptr) {
      out.append(*value);
    } else {
      out.append(tmpl.substr(open, close + 2 - open));
    }
    pos = close + 2;
  }
  out.append(tmpl.substr(pos));
  return out;
}

nlohmann::json TreeJson(const CallTree& tree) {
  nlohmann::json files = nlohmann::json::array();
  nlohmann::json file_labels = nlohmann::json::array();  // how the page prints each file
  std::unordered_map<std::string_view, size_t> file_index;
  nlohmann::json names = nlohmann::json::array();
  nlohmann::json file_of = nlohmann::json::array();
  nlohmann::json lines = nlohmann::json::array();
  std::vector<std::string_view> all_files;
  for (const TreeFunction& fn : tree.functions) all_files.push_back(fn.filename);
  const FileLabels labels = FileLabels::Of(all_files);
  for (const TreeFunction& fn : tree.functions) {
    auto [it, inserted] = file_index.try_emplace(fn.filename, files.size());
    if (inserted) {
      files.push_back(fn.filename);
      file_labels.push_back(labels.Label(fn.filename));
    }
    names.push_back(labels.FunctionName(fn.name, fn.filename));
    file_of.push_back(it->second);
    lines.push_back(fn.line);
  }
  // Parents as distances (small numbers: most nodes directly follow theirs).
  nlohmann::json up = nlohmann::json::array();
  nlohmann::json node_fn = nlohmann::json::array();
  for (size_t i = 0; i < tree.size(); ++i) {
    up.push_back(i - tree.parent[i]);
    node_fn.push_back(tree.function[i] == CallTree::kNoFunction ? -1 : static_cast<int64_t>(tree.function[i]));
  }
  nlohmann::json self = nlohmann::json::array();
  for (const auto& column : tree.self) self.push_back(column);
  // Sampling variances (rounded: the page only needs a few digits), or null
  // for a column whose profile cannot say how it was sampled.
  nlohmann::json variance = nlohmann::json::array();
  for (size_t c = 0; c < tree.variance.size(); ++c) {
    if (!tree.sampled[c]) {
      variance.push_back(nullptr);
      continue;
    }
    nlohmann::json column = nlohmann::json::array();
    for (double v : tree.variance[c]) column.push_back(std::llround(v));
    variance.push_back(std::move(column));
  }
  return {{"files", std::move(files)},      {"fileLabels", std::move(file_labels)},
          {"names", std::move(names)},      {"fileOf", std::move(file_of)},
          {"lines", std::move(lines)},      {"up", std::move(up)},
          {"fn", std::move(node_fn)},       {"self", std::move(self)},
          {"variance", std::move(variance)}};
}

}  // namespace

Result<std::string> RenderFlamegraphPage(const CallTree& tree, const PageInfo& info) {
  if (info.sample_types.size() != tree.values_per_series || info.initial_type >= info.sample_types.size()) {
    return Error(ErrorCode::kInternal, "flamegraph page: sample types do not match the tree");
  }
  try {
    nlohmann::json data = TreeJson(tree);
    nlohmann::json types = nlohmann::json::array();
    for (const PageSampleType& t : info.sample_types) types.push_back({{"type", t.type}, {"unit", t.unit}});
    data["version"] = 1;
    data["title"] = info.title;
    data["types"] = std::move(types);
    data["initialType"] = info.initial_type;
    data["diff"] = info.diff;
    data["details"] = info.details;
    data["warnings"] = info.warnings;
    std::string json = ScriptSafeJson(data);
    std::string title = EscapeMarkup(info.title);
    return Fill(kFlamegraphPageHtml,
                {{"title", title}, {"style", kFlamegraphPageCss}, {"script", kFlamegraphPageJs}, {"data", json}});
  } catch (const std::exception& e) {
    return Error(ErrorCode::kInternal, fmt::format("flamegraph page: {}", e.what()));
  }
}

std::vector<std::string> ProfileDetails(const Profile& profile) {
  std::vector<std::string> details;
  if (profile.time_nanos > 0) {
    std::time_t seconds = static_cast<std::time_t>(profile.time_nanos / 1'000'000'000);
    std::tm tm{};
    gmtime_r(&seconds, &tm);
    char buf[64];
    std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
    details.push_back(fmt::format("time: {}", buf));
  }
  if (profile.duration_nanos > 0) {
    details.push_back(fmt::format("duration: {:.3g} s", static_cast<double>(profile.duration_nanos) / 1e9));
  }
  for (std::string& comment : profile.CommentTexts()) details.push_back(std::move(comment));
  return details;
}

}  // namespace internal

Result<std::string> RenderFlamegraphHtml(const Profile& profile, const FlamegraphOptions& options) {
  HEAPPROF_RETURN_IF_ERROR(ValidateProfile(profile));
  if (profile.samples.empty()) {
    return Error(ErrorCode::kInvalidArgument, "profile has no samples (empty profile): nothing to draw");
  }
  HEAPPROF_ASSIGN_OR_RETURN(int initial, ResolveSampleIndex(profile, options.sample_type));

  internal::PageInfo info;
  info.title = options.title.empty() ? "heapprof flamegraph" : options.title;
  std::vector<int> indexes;
  for (size_t i = 0; i < profile.sample_types.size(); ++i) {
    indexes.push_back(static_cast<int>(i));
    info.sample_types.push_back({std::string(profile.str(profile.sample_types[i].type)),
                                 std::string(profile.str(profile.sample_types[i].unit))});
  }
  info.initial_type = static_cast<size_t>(initial);
  info.details = internal::ProfileDetails(profile);
  for (int index : indexes) {
    std::string few = TooFewSamples(profile, index);
    info.warnings.push_back(few.empty()
                                ? few
                                : few + fmt::format("; profile a longer window or sample more often "
                                                    "(interval {}, try --interval {})",
                                                    FormatInterval(profile.period),
                                                    FormatInterval(CheckSampling(profile, index).suggested_interval)));
  }

  internal::CallTreeBuilder builder(1, indexes.size());
  HEAPPROF_RETURN_IF_ERROR(builder.AddProfile(profile, 0, indexes));
  return internal::RenderFlamegraphPage(builder.Take(), info);
}

}  // namespace heapprof
