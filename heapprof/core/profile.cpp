#include "heapprof/core/profile.h"

namespace heapprof {

StringId Profile::AddString(std::string s) {
  strings.push_back(std::move(s));
  return StringId{static_cast<uint32_t>(strings.size() - 1)};
}

int Profile::FindSampleType(std::string_view type) const {
  for (size_t i = 0; i < sample_types.size(); ++i) {
    if (str(sample_types[i].type) == type) return static_cast<int>(i);
  }
  return -1;
}

int64_t Profile::Total(int sample_index) const {
  int64_t total = 0;
  if (sample_index < 0) return 0;
  for (const Sample& s : samples) {
    if (static_cast<size_t>(sample_index) < s.values.size()) total += s.values[sample_index];
  }
  return total;
}

int64_t Profile::NumLabel(const Sample& sample, std::string_view key, int64_t fallback) const {
  for (const Label& l : sample.labels) {
    if (str(l.key) == key && l.str == StringId{0}) return l.num;
  }
  return fallback;
}

std::vector<std::string> Profile::CommentTexts() const {
  std::vector<std::string> out;
  out.reserve(comments.size());
  for (StringId c : comments) out.emplace_back(str(c));
  return out;
}

std::string Profile::CommentValue(std::string_view key) const {
  for (StringId c : comments) {
    std::string_view text = str(c);
    if (text.size() > key.size() + 1 && text.substr(0, key.size()) == key && text.substr(key.size(), 2) == ": ") {
      return std::string(text.substr(key.size() + 2));
    }
  }
  return {};
}

std::string_view Profile::FunctionName(LocationId id) const {
  const Location& loc = location(id);
  if (loc.lines.empty()) return {};
  return str(function(loc.lines.front().function).name);
}

}  // namespace heapprof
