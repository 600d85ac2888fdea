// libFuzzer target: SourceMap::Parse on arbitrary text never crashes; what it
// accepts answers lookups consistently, and parses the same once nlohmann has
// re-serialized it (which unescapes "mappings" and drops the fast path's cuts).
// Size property (docs/security.md): a map of N bytes holds at most N
// mappings, sources and names together (each costs at least one byte).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>

#include "heapprof/core/source_map.h"

namespace {

using heapprof::OriginalPosition;
using heapprof::SourceMap;

// Lines and sources checked per input: enough to reach every code path
// without letting a map of a million empty lines slow the fuzzer down.
constexpr int64_t kMaxLines = 512;
constexpr size_t kMaxSources = 64;

constexpr int kMaxDepth = 256;

// Bracket nesting, counting brackets inside strings too (an over-estimate).
int NestingDepth(std::string_view text) {
  int depth = 0, deepest = 0;
  for (char c : text) {
    if (c == '[' || c == '{') deepest = std::max(deepest, ++depth);
    if (c == ']' || c == '}') --depth;
  }
  return deepest;
}

void Check(bool ok) {
  if (!ok) std::abort();
}

void CheckPosition(const SourceMap& map, const std::optional<OriginalPosition>& p) {
  if (!p) return;
  Check(p->source < map.sources().size());
  Check(p->name == -1 || (p->name >= 0 && static_cast<size_t>(p->name) < map.names().size()));
  Check(p->line >= 1 && p->column >= 1 && p->generated_column >= 1);
}

void CheckLine(const SourceMap& map, int64_t line) {
  constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max();
  std::optional<OriginalPosition> first = map.FirstOnLine(line);
  CheckPosition(map, first);
  // A line either has a mapping to a source or not, whatever the column asked.
  for (int64_t column :
       {kMin, int64_t{-1}, int64_t{0}, int64_t{1}, int64_t{2}, int64_t{17}, int64_t{4096}, int64_t{1} << 32, kMax}) {
    std::optional<OriginalPosition> at = map.Lookup(line, column);
    CheckPosition(map, at);
    Check(at.has_value() == first.has_value());
    std::optional<OriginalPosition> before = map.MappingBefore(line, column);
    CheckPosition(map, before);
    if (before) Check(before->generated_column < column);
  }
  if (first) {
    // Asking for the exact column of a mapping finds a mapping starting there.
    std::optional<OriginalPosition> again = map.Lookup(line, first->generated_column);
    Check(again.has_value() && again->generated_column == first->generated_column);
  }
}

void CheckLookups(const SourceMap& map) {
  const int64_t lines = static_cast<int64_t>(map.generated_lines());
  Check(map.generated_lines() == 0 || map.mapping_count() > 0);
  for (int64_t line :
       {std::numeric_limits<int64_t>::min(), int64_t{-1}, int64_t{0}, lines + 1, std::numeric_limits<int64_t>::max()}) {
    if (line >= 1 && line <= lines) continue;
    Check(!map.Lookup(line, 1) && !map.MappingBefore(line, 2) && !map.FirstOnLine(line));
  }
  for (int64_t line = 1; line <= std::min(lines, kMaxLines); ++line) CheckLine(map, line);
  if (lines > kMaxLines) CheckLine(map, lines);
  for (size_t i = 0; i < std::min(map.sources().size(), kMaxSources); ++i) (void)map.source_content(i);
  Check(!map.source_content(map.sources().size()));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  heapprof::Result<SourceMap> map = SourceMap::Parse(text, "file:///srv/app/dist/worker.js.map");
  if (!map.ok()) return 0;
  Check(map->mapping_count() + map->sources().size() + map->names().size() <= size);
  CheckLookups(*map);

  // nlohmann's dump recurses: keep the re-serialization to inputs nested at most kMaxDepth deep.
  if (NestingDepth(text) > kMaxDepth) return 0;
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return 0;  // sourcesContent is decoded lazily: only it may be malformed
  heapprof::Result<SourceMap> again = SourceMap::Parse(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
                                                       "file:///srv/app/dist/worker.js.map");
  Check(again.ok());
  Check(again->mapping_count() == map->mapping_count());
  Check(again->generated_lines() == map->generated_lines());
  Check(again->sources() == map->sources());
  Check(again->names() == map->names());
  for (size_t i = 0; i < std::min(map->sources().size(), kMaxSources); ++i) {
    Check(again->source_content(i) == map->source_content(i));
  }
  return 0;
}
