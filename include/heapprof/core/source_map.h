// Source map v3 reader: decodes a map once (regular or indexed with
// `sections`) and answers "which original position produced this generated
// one?" by binary search. V8-free; bad input becomes an error value.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "heapprof/core/status.h"

namespace heapprof {
namespace internal {
class SourceMapParser;
}  // namespace internal

// A member of a source map heapprof rewrote for a project's bundle: its
// sources are names relative to the project (src/index.ts), kept as written
// instead of resolved against the map's folder. Its value is the project's folder.
inline constexpr const char* kProjectSourcesKey = "x_heapprof_project_sources";

// An original position; line and column are 1-based, like heapprof frames.
struct OriginalPosition {
  uint32_t source = 0;           // index into SourceMap::sources()
  int64_t line = 0;              // 1-based
  int64_t column = 0;            // 1-based
  int32_t name = -1;             // index into SourceMap::names(), -1 = no name
  int64_t generated_column = 0;  // 1-based column of the mapping that matched
};

// A parsed, immutable source map.
class SourceMap {
 public:
  // Parses a v3 map. `map_location` (the map's file path, or the script's for
  // an inline map) resolves relative `sources`; empty leaves them as written.
  // Malformed JSON, bad VLQ and out-of-range indexes fail with kDataLoss.
  static Result<SourceMap> Parse(std::string_view json, std::string_view map_location = {});

  // The mapping covering generated 1-based (line, column): the one starting
  // exactly there, else the nearest one before it on the same line, else the
  // nearest one after it. nullopt when the line has no mapping to a source.
  std::optional<OriginalPosition> Lookup(int64_t line, int64_t column) const;
  // The mapping that starts closest before `column` on `line` (strictly
  // before), whatever it maps to; nullopt when there is none or it has no source.
  std::optional<OriginalPosition> MappingBefore(int64_t line, int64_t column) const;
  // The first mapping to a source on `line` (for positions without a column).
  std::optional<OriginalPosition> FirstOnLine(int64_t line) const;

  // Original file names, with sourceRoot applied and resolved against the
  // map's location; file:// URLs become paths.
  const std::vector<std::string>& sources() const { return sources_; }
  // The embedded text of source i (`sourcesContent`), if the map carries it.
  // Decoded on first use (thread-safe): most lookups never need it.
  std::optional<std::string> source_content(size_t i) const;
  const std::vector<std::string>& names() const { return names_; }
  // Number of decoded segments (including ones that map to no source).
  size_t mapping_count() const { return segments_.size(); }
  // Number of generated lines the mappings cover.
  size_t generated_lines() const { return line_starts_.empty() ? 0 : line_starts_.size() - 1; }

  // One decoded segment; all fields 0-based, source/name -1 when absent.
  struct Segment {
    uint32_t generated_column = 0;
    int32_t source = -1;
    int32_t original_line = 0;
    int32_t original_column = 0;
    int32_t name = -1;
  };

 private:
  friend class internal::SourceMapParser;
  std::optional<OriginalPosition> ToPosition(const Segment& s) const;
  bool LineRange(int64_t line, size_t& begin, size_t& end) const;

  std::vector<std::string> sources_;
  struct Contents;
  std::shared_ptr<Contents> contents_;  // shared_ptr keeps SourceMap movable
  std::vector<std::string> names_;
  std::vector<Segment> segments_;      // sorted by (generated line, column)
  std::vector<uint32_t> columns_;      // segments_[i].generated_column, dense for binary search
  std::vector<uint32_t> line_starts_;  // segments of line L: [starts[L], starts[L+1])
};

}  // namespace heapprof
