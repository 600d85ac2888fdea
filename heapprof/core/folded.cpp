#include "heapprof/core/folded.h"

#include <fmt/format.h>
#include <map>

#include "heapprof/core/pprof.h"
#include "heapprof/core/report.h"

namespace heapprof {
namespace {

// ';' separates frames and the last ' ' separates the value; names keep their
// spaces (the value is found from the right) but lose ';' and line breaks.
std::string Sanitize(std::string_view name) {
  std::string out(name);
  for (char& c : out) {
    if (c == ';') c = ',';
    if (c == '\n' || c == '\r') c = ' ';
  }
  return out;
}

std::string FrameText(const Profile& p, const Line& line, bool with_filenames) {
  const Function& f = p.function(line.function);
  std::string_view name = p.str(f.name);
  std::string text = Sanitize(name.empty() ? std::string_view("(unknown)") : name);
  if (with_filenames && !p.str(f.filename).empty()) {
    int64_t at = line.line != 0 ? line.line : f.start_line;
    text += fmt::format(" ({}:{})", Sanitize(p.str(f.filename)), at);
  }
  return text;
}

}  // namespace

Result<std::string> EncodeFolded(const Profile& profile, const FoldedOptions& options) {
  HEAPPROF_RETURN_IF_ERROR(ValidateProfile(profile));
  HEAPPROF_ASSIGN_OR_RETURN(int index, ResolveSampleIndex(profile, options.sample_type));

  // Frame text per location, computed once; a location with inlined lines
  // contributes one frame per line, outermost first.
  std::vector<std::string> location_text(profile.locations.size());
  for (const Location& loc : profile.locations) {
    std::string& text = location_text[static_cast<uint32_t>(loc.id) - 1];
    for (auto it = loc.lines.rbegin(); it != loc.lines.rend(); ++it) {
      if (!text.empty()) text += ';';
      text += FrameText(profile, *it, options.with_filenames);
    }
    if (text.empty()) text = fmt::format("(location 0x{:x})", loc.address);
  }

  std::map<std::string, int64_t> stacks;
  for (const Sample& s : profile.samples) {
    int64_t value = s.values[index];
    if (value == 0) continue;
    std::string key;
    for (auto it = s.locations.rbegin(); it != s.locations.rend(); ++it) {  // root first
      if (!key.empty()) key += ';';
      key += location_text[static_cast<uint32_t>(*it) - 1];
    }
    if (key.empty()) key = "(root)";
    stacks[key] += value;
  }

  std::string out;
  for (const auto& [stack, value] : stacks) {
    if (value == 0) continue;
    out += stack;
    out += ' ';
    out += std::to_string(value);
    out += '\n';
  }
  return out;
}

}  // namespace heapprof
