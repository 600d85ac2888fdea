#include "heapprof/core/source_map_json.h"

#include <utility>
#include <vector>

namespace heapprof::internal {
namespace {

void SkipSpace(std::string_view t, size_t& i) {
  while (i < t.size() && (t[i] == ' ' || t[i] == '\t' || t[i] == '\n' || t[i] == '\r')) ++i;
}

// Past the string starting at t[i] == '"'; false when it never ends.
bool SkipString(std::string_view t, size_t& i) {
  size_t from = i + 1;
  while (true) {
    size_t q = t.find('"', from);
    if (q == std::string_view::npos) return false;
    size_t backslashes = 0;
    while (q - backslashes > i + 1 && t[q - backslashes - 1] == '\\') ++backslashes;
    if (backslashes % 2 == 0) {
      i = q + 1;
      return true;
    }
    from = q + 1;
  }
}

// Past one JSON value; false on anything unexpected (nlohmann then reports it).
bool SkipValue(std::string_view t, size_t& i) {
  if (i >= t.size()) return false;
  if (t[i] == '"') return SkipString(t, i);
  if (t[i] == '{' || t[i] == '[') {
    int depth = 0;
    while (i < t.size()) {
      char c = t[i];
      if (c == '"') {
        if (!SkipString(t, i)) return false;
        continue;
      }
      if (c == '{' || c == '[') ++depth;
      if (c == '}' || c == ']') {
        if (--depth == 0) {
          ++i;
          return true;
        }
      }
      ++i;
    }
    return false;
  }
  size_t start = i;
  while (i < t.size() && std::string_view(",}] \t\r\n").find(t[i]) == std::string_view::npos) ++i;
  return i > start;
}

}  // namespace

std::optional<BigValues> FindBigValues(std::string_view t) {
  size_t i = 0;
  SkipSpace(t, i);
  if (i >= t.size() || t[i] != '{') return std::nullopt;
  ++i;
  struct Cut {
    size_t begin, end;
  };
  std::optional<Cut> mappings, contents;
  while (true) {
    SkipSpace(t, i);
    if (i < t.size() && t[i] == '}') break;
    if (i >= t.size() || t[i] != '"') return std::nullopt;
    size_t key_begin = i;
    if (!SkipString(t, i)) return std::nullopt;
    std::string_view key = t.substr(key_begin + 1, i - key_begin - 2);
    SkipSpace(t, i);
    if (i >= t.size() || t[i] != ':') return std::nullopt;
    ++i;
    SkipSpace(t, i);
    size_t value_begin = i;
    if (!SkipValue(t, i)) return std::nullopt;
    Cut cut{value_begin, i};
    if (key == "sections") return std::nullopt;
    if (key == "mappings") {
      if (mappings || t[value_begin] != '"') return std::nullopt;
      mappings = cut;
    } else if (key == "sourcesContent") {
      if (contents) return std::nullopt;
      contents = cut;
    }
    SkipSpace(t, i);
    if (i < t.size() && t[i] == ',') {
      ++i;
      continue;
    }
    if (i < t.size() && t[i] == '}') break;
    return std::nullopt;
  }
  ++i;
  SkipSpace(t, i);
  if (i != t.size() || !mappings) return std::nullopt;

  BigValues b;
  b.mappings_json = t.substr(mappings->begin, mappings->end - mappings->begin);
  b.mappings = b.mappings_json.substr(1, b.mappings_json.size() - 2);
  b.mappings_escaped = b.mappings.find('\\') != std::string_view::npos;
  std::vector<Cut> cuts{*mappings};
  if (contents) {
    b.contents_json = t.substr(contents->begin, contents->end - contents->begin);
    cuts.push_back(*contents);
    if (cuts[1].begin < cuts[0].begin) std::swap(cuts[0], cuts[1]);
  }
  size_t at = 0;
  for (const Cut& c : cuts) {
    b.reduced.append(t.substr(at, c.begin - at));
    b.reduced.append("null");
    at = c.end;
  }
  b.reduced.append(t.substr(at));
  return b;
}

}  // namespace heapprof::internal
