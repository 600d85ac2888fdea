// The static SVG flamegraph: one sample type, flame orientation (root at the
// bottom), native <title> tooltips; nothing that needs JS.
#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "heapprof/core/call_tree.h"
#include "heapprof/core/file_labels.h"
#include "heapprof/core/flamegraph.h"
#include "heapprof/core/pprof.h"
#include "heapprof/core/report.h"
#include "heapprof/core/text.h"

namespace heapprof {
namespace {

constexpr int kRow = 16;
constexpr int kTop = 44;  // title and subtitle
constexpr int kPad = 10;
constexpr double kCharWidth = 6.6;  // 11 px monospace

// XML text: invalid UTF-8 replaced, control characters dropped, escaped.
std::string XmlText(std::string_view text) { return internal::EscapeMarkup(internal::SanitizeUtf8(text)); }

// Cuts a label to `max_chars` code points, with an ellipsis when cut.
std::string Truncate(std::string_view text, size_t max_chars) {
  size_t chars = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) continue;
    if (chars == max_chars - 1) {
      // Would the rest fit exactly? Count what is left.
      size_t rest = 0;
      for (size_t k = i; k < text.size(); ++k) rest += (static_cast<unsigned char>(text[k]) & 0xC0) != 0x80;
      if (rest <= 1) return std::string(text);
      return std::string(text.substr(0, i)) + "\xE2\x80\xA6";
    }
    ++chars;
  }
  return std::string(text);
}

uint32_t Hash(std::string_view s) {
  uint32_t h = 2166136261u;
  for (char c : s) {
    h ^= static_cast<unsigned char>(c);
    h *= 16777619u;
  }
  return h;
}

std::string Colour(const internal::TreeFunction& fn) {
  uint32_t h = Hash(fn.name);
  if (fn.filename.empty() && !fn.name.empty() && fn.name[0] == '(') return fmt::format("hsl(220,9%,{}%)", 68 + h % 8);
  // Runtime internals: Node's own modules, and heapprof's worker runtime and its bundled libraries.
  if (fn.filename.rfind("node:", 0) == 0 || fn.filename.rfind("internal/", 0) == 0 ||
      fn.filename.rfind("heapprof:", 0) == 0) {
    return fmt::format("hsl({},42%,{}%)", 185 + h % 25, 60 + (h >> 8) % 10);
  }
  return fmt::format("hsl({},{}%,{}%)", 8 + h % 38, 72 + (h >> 8) % 16, 58 + (h >> 16) % 10);
}

std::string Percent(int64_t part, int64_t whole) {
  if (whole == 0) return "0%";
  return fmt::format("{:.2f}%", 100.0 * static_cast<double>(part) / static_cast<double>(whole));
}

}  // namespace

Result<std::string> RenderFlamegraphSvg(const Profile& profile, const FlamegraphSvgOptions& options) {
  HEAPPROF_RETURN_IF_ERROR(ValidateProfile(profile));
  if (profile.samples.empty()) {
    return Error(ErrorCode::kInvalidArgument, "profile has no samples (empty profile): nothing to draw");
  }
  if (options.width < 200) return Error(ErrorCode::kInvalidArgument, "SVG width must be at least 200 pixels");
  HEAPPROF_ASSIGN_OR_RETURN(int index, ResolveSampleIndex(profile, options.sample_type));
  const std::string type(profile.str(profile.sample_types[index].type));
  const std::string unit(profile.str(profile.sample_types[index].unit));

  internal::CallTreeBuilder builder(1, 1);
  HEAPPROF_RETURN_IF_ERROR(builder.AddProfile(profile, 0, {index}));
  internal::CallTree tree = builder.Take();
  std::vector<int64_t> total = tree.Totals(0);
  const std::vector<int64_t>& self = tree.self[0];
  std::vector<std::string_view> files;
  for (const internal::TreeFunction& fn : tree.functions) files.push_back(fn.filename);
  const internal::FileLabels labels = internal::FileLabels::Of(files);

  // Children sorted widest first, as on the page.
  std::vector<std::vector<uint32_t>> children(tree.size());
  for (size_t i = 1; i < tree.size(); ++i) children[tree.parent[i]].push_back(static_cast<uint32_t>(i));
  for (auto& kids : children) {
    std::sort(kids.begin(), kids.end(), [&](uint32_t a, uint32_t b) {
      if (total[a] != total[b]) return total[a] > total[b];
      return tree.functions[tree.function[a]].name < tree.functions[tree.function[b]].name;
    });
  }

  struct Rect {
    uint32_t node;
    double x, w;
    int depth;
  };
  std::vector<Rect> rects;
  const double width = options.width - 2 * kPad;
  const int64_t all = total[0];
  int max_depth = 0;
  if (all > 0) {
    std::vector<Rect> stack{{0, 0, width, 0}};
    while (!stack.empty()) {
      Rect r = stack.back();
      stack.pop_back();
      rects.push_back(r);
      max_depth = std::max(max_depth, r.depth);
      double x = r.x;
      for (uint32_t k : children[r.node]) {
        double w = width * static_cast<double>(total[k]) / static_cast<double>(all);
        if (w < 1.0) break;  // sorted: the rest is narrower still
        stack.push_back({k, x, w, r.depth + 1});
        x += w;
      }
    }
  }

  const int height = kTop + (max_depth + 1) * kRow + kPad;
  std::string title = options.title.empty() ? "heapprof flamegraph" : options.title;
  std::string out;
  out += fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "font-family=\"ui-monospace, Menlo, Consolas, 'DejaVu Sans Mono', monospace\" font-size=\"11\">\n"
      "<title>{2}</title>\n"
      "<rect width=\"100%\" height=\"100%\" fill=\"#f7f8fa\"/>\n"
      "<text x=\"{3}\" y=\"20\" font-size=\"15\" font-weight=\"bold\" fill=\"#1f2430\" "
      "font-family=\"system-ui, sans-serif\">{2}</text>\n"
      "<text x=\"{3}\" y=\"36\" fill=\"#5d6677\" font-family=\"system-ui, sans-serif\">{4} total {5}"
      " \xC2\xB7 frames narrower than 1 px omitted</text>\n",
      options.width, height, XmlText(title), kPad, XmlText(type), XmlText(FormatValue(all, unit)));
  if (all <= 0) {
    out += fmt::format("<text x=\"{}\" y=\"{}\" fill=\"#5d6677\">No {} in this profile.</text>\n", kPad, kTop + 12,
                       XmlText(type));
  }
  for (const Rect& r : rects) {
    const bool root = r.node == 0;
    const internal::TreeFunction* fn = root ? nullptr : &tree.functions[tree.function[r.node]];
    std::string name = root ? "all" : labels.FunctionName(fn->name, fn->filename);
    std::string where;
    if (fn != nullptr && !fn->filename.empty()) {
      std::string file = labels.Label(fn->filename);
      where = fn->line > 0 ? fmt::format("{}:{}", file, fn->line) : file;
    }
    int y = kTop + (max_depth - r.depth) * kRow;
    std::string tip = fmt::format("{}{}\ntotal {} ({})\nself {} ({})", name, where.empty() ? "" : " (" + where + ")",
                                  FormatValue(total[r.node], unit), Percent(total[r.node], all),
                                  FormatValue(self[r.node], unit), Percent(self[r.node], all));
    out += fmt::format(
        "<g><title>{}</title><rect x=\"{:.2f}\" y=\"{}\" width=\"{:.2f}\" height=\"{}\" rx=\"2\" fill=\"{}\"/>",
        XmlText(tip), kPad + r.x, y, std::max(r.w - (r.w > 3 ? 1.0 : 0.0), 0.5), kRow - 1,
        root ? std::string("#8a93a6") : Colour(*fn));
    size_t max_chars = static_cast<size_t>((r.w - 6) / kCharWidth);
    if (max_chars >= 3) {
      out += fmt::format("<text x=\"{:.2f}\" y=\"{}\" fill=\"#1b1f27\">{}</text>", kPad + r.x + 3, y + 11,
                         XmlText(Truncate(name, max_chars)));
    }
    out += "</g>\n";
  }
  out += "</svg>\n";
  return out;
}

}  // namespace heapprof
