#include "heapprof/core/source_map.h"

#include <fmt/format.h>
#include <algorithm>
#include <array>
#include <filesystem>
#include <limits>
#include <mutex>
#include <nlohmann/json.hpp>

#include "heapprof/core/source_map_json.h"
#include "heapprof/core/text.h"

namespace heapprof {
namespace {

using json = nlohmann::json;

constexpr int kMaxSectionDepth = 8;

// Base64 digit values for VLQ decoding; -1 marks a character outside the alphabet.
constexpr std::array<int8_t, 256> MakeBase64Table() {
  std::array<int8_t, 256> table{};
  for (auto& v : table) v = -1;
  constexpr std::string_view kAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  for (size_t i = 0; i < kAlphabet.size(); ++i)
    table[static_cast<unsigned char>(kAlphabet[i])] = static_cast<int8_t>(i);
  return table;
}
constexpr std::array<int8_t, 256> kBase64 = MakeBase64Table();

bool HasScheme(std::string_view s) { return !internal::UrlScheme(s).empty(); }

std::string ResolveSource(std::string_view root, std::string_view source, const std::string& base_dir) {
  std::string s;
  if (!root.empty() && !HasScheme(source) && (source.empty() || source.front() != '/')) {
    s.assign(root);
    if (s.back() != '/') s.push_back('/');
  }
  s.append(source);
  if (s.substr(0, 7) == "file://") s.erase(0, 7);
  if (HasScheme(s)) return s;  // webpack://, http://: not a local file, keep as written
  std::filesystem::path p(s);
  if (p.is_relative() && !base_dir.empty()) p = std::filesystem::path(base_dir) / p;
  return p.lexically_normal().string();
}

}  // namespace

// sourcesContent, decoded on first use: values of the maps parsed eagerly,
// plus raw JSON arrays (one per map) still to decode.
struct SourceMap::Contents {
  struct Pending {
    size_t base = 0;   // index of the map's first source
    size_t count = 0;  // its number of sources
    std::string json;  // its sourcesContent array
  };
  std::once_flag once;
  std::vector<std::optional<std::string>> values;
  std::vector<Pending> pending;
};

namespace internal {

// Decodes JSON and VLQ into a SourceMap; one instance per Parse call.
class SourceMapParser {
 public:
  explicit SourceMapParser(std::string base_dir) : base_dir_(std::move(base_dir)) {
    map_.contents_ = std::make_shared<SourceMap::Contents>();
  }

  // The fast path: `j` is the map without its big values, `big` has them.
  Status ParseSplit(const json& j, const internal::BigValues& big) {
    if (!j.is_object()) return Error(ErrorCode::kDataLoss, "source map is not a JSON object");
    if (Status st = CheckVersion(j); !st.ok()) return st;
    std::string unescaped;
    std::string_view mappings = big.mappings;
    if (big.mappings_escaped) {
      json m = json::parse(big.mappings_json);  // a complete string token: cannot fail once scanned
      unescaped = m.get<std::string>();
      mappings = unescaped;
    }
    return ParseRegular(j, 0, 0, &mappings, big.contents_json);
  }

  Status ParseAny(const json& j, uint32_t line_offset, uint32_t column_offset, int depth) {
    if (!j.is_object()) return Error(ErrorCode::kDataLoss, "source map is not a JSON object");
    if (Status st = CheckVersion(j); !st.ok()) return st;
    if (j.contains("sections")) return ParseIndex(j, line_offset, column_offset, depth);
    return ParseRegular(j, line_offset, column_offset, nullptr, {});
  }

  SourceMap Finish() && {
    map_.line_starts_.push_back(static_cast<uint32_t>(map_.segments_.size()));
    map_.contents_->values.resize(map_.sources_.size());
    // Tools emit each line in column order; sort only lines that are not.
    auto by_column = [](const SourceMap::Segment& a, const SourceMap::Segment& b) {
      return a.generated_column < b.generated_column;
    };
    for (size_t l = 0; l + 1 < map_.line_starts_.size(); ++l) {
      auto b = map_.segments_.begin() + map_.line_starts_[l];
      auto e = map_.segments_.begin() + map_.line_starts_[l + 1];
      if (!std::is_sorted(b, e, by_column)) std::stable_sort(b, e, by_column);
    }
    map_.columns_.reserve(map_.segments_.size());
    for (const SourceMap::Segment& seg : map_.segments_) map_.columns_.push_back(seg.generated_column);
    return std::move(map_);
  }

 private:
  static Status CheckVersion(const json& j) {
    if (auto v = j.find("version"); v != j.end() && !(v->is_number_integer() && v->get<int64_t>() == 3)) {
      // Nothing read is quoted (docs/security.md): a "map" may be any file.
      return Error(ErrorCode::kDataLoss,
                   fmt::format("unsupported source map version: a {} instead of the number 3", v->type_name()));
    }
    return Status::Ok();
  }

  Status ParseIndex(const json& j, uint32_t line_offset, uint32_t column_offset, int depth) {
    if (depth >= kMaxSectionDepth) return Error(ErrorCode::kDataLoss, "index map sections nested too deeply");
    const json& sections = j["sections"];
    if (!sections.is_array()) return Error(ErrorCode::kDataLoss, "index map \"sections\" is not an array");
    for (size_t i = 0; i < sections.size(); ++i) {
      const json& s = sections[i];
      auto where = [&](std::string_view what) {
        return Error(ErrorCode::kDataLoss, fmt::format("index map section {}: {}", i, what));
      };
      if (!s.is_object()) return where("not an object");
      auto off = s.find("offset");
      if (off == s.end() || !off->is_object()) return where("missing \"offset\"");
      auto line = off->find("line");
      auto column = off->find("column");
      if (line == off->end() || column == off->end() || !line->is_number_unsigned() || !column->is_number_unsigned()) {
        return where("\"offset\" needs non-negative \"line\" and \"column\"");
      }
      uint64_t l = line->get<uint64_t>(), c = column->get<uint64_t>();
      if (l > std::numeric_limits<int32_t>::max() || c > std::numeric_limits<int32_t>::max()) {
        return where("offset out of range");
      }
      if (s.contains("url")) return where("sections that reference a \"url\" are not supported");
      auto sub = s.find("map");
      if (sub == s.end()) return where("missing \"map\"");
      // The column offset applies only to the section's first line. Nested
      // sections add up: check the sums, not only each offset.
      uint64_t section_line = uint64_t{line_offset} + l;
      uint64_t section_column = c + (l == 0 ? column_offset : 0);
      if (section_line > std::numeric_limits<int32_t>::max() || section_column > std::numeric_limits<int32_t>::max()) {
        return where("offset out of range");
      }
      if (Status st =
              ParseAny(*sub, static_cast<uint32_t>(section_line), static_cast<uint32_t>(section_column), depth + 1);
          !st.ok()) {
        return where(st.message());
      }
    }
    return Status::Ok();
  }

  // `split_mappings` / `split_contents`: the values the fast path cut out of `j`.
  Status ParseRegular(const json& j, uint32_t line_offset, uint32_t column_offset,
                      const std::string_view* split_mappings, std::string_view split_contents) {
    std::string_view mappings;
    if (split_mappings) {
      mappings = *split_mappings;
    } else {
      auto m = j.find("mappings");
      if (m == j.end() || !m->is_string()) {
        return Error(ErrorCode::kDataLoss, "source map has no \"mappings\" string");
      }
      mappings = m->get_ref<const std::string&>();
    }
    auto sources = j.find("sources");
    if (sources == j.end() || !sources->is_array()) {
      return Error(ErrorCode::kDataLoss, "source map has no \"sources\" array");
    }
    std::string root;
    if (auto r = j.find("sourceRoot"); r != j.end() && r->is_string()) root = r->get<std::string>();
    // A map heapprof rewrote for a project's bundle names its sources as the
    // project does (src/index.ts, node_modules/hono/dist/index.js): kept as
    // written, so tables show the project's own names.
    const bool project_names = j.contains(kProjectSourcesKey);

    const size_t source_base = map_.sources_.size();
    const size_t name_base = map_.names_.size();
    for (const json& s : *sources) {
      if (!s.is_string()) {
        map_.sources_.push_back("");
      } else if (project_names) {
        map_.sources_.push_back(s.get<std::string>());
      } else {
        map_.sources_.push_back(ResolveSource(root, s.get_ref<const std::string&>(), base_dir_));
      }
    }
    SourceMap::Contents& contents = *map_.contents_;
    if (!split_contents.empty()) {
      contents.pending.push_back({source_base, sources->size(), std::string(split_contents)});
    } else if (auto c = j.find("sourcesContent"); c != j.end() && c->is_array()) {
      contents.values.resize(map_.sources_.size());
      for (size_t i = 0; i < c->size() && i < sources->size(); ++i) {
        if ((*c)[i].is_string()) contents.values[source_base + i] = (*c)[i].get<std::string>();
      }
    }
    if (auto n = j.find("names"); n != j.end() && n->is_array()) {
      for (const json& name : *n) map_.names_.push_back(name.is_string() ? name.get<std::string>() : "");
    }
    map_.segments_.reserve(map_.segments_.size() + mappings.size() / 6);
    return DecodeMappings(mappings, line_offset, column_offset, map_.sources_.size() - source_base, source_base,
                          map_.names_.size() - name_base, name_base);
  }

  Status DecodeMappings(std::string_view text, uint32_t line_offset, uint32_t column_offset, size_t n_sources,
                        size_t source_base, size_t n_names, size_t name_base) {
    uint32_t line = 0;
    int64_t column = 0, source = 0, orig_line = 0, orig_column = 0, name = 0;
    std::array<int64_t, 6> field{};
    size_t segment_in_line = 0;
    auto fail = [&](std::string_view what) {
      return Error(ErrorCode::kDataLoss, fmt::format("bad mappings at generated line {} segment {}: {}", line + 1,
                                                     segment_in_line + 1, what));
    };
    const char* p = text.data();
    const char* end = p + text.size();
    while (p < end) {
      if (*p == ';') {
        ++line;
        column = 0;
        segment_in_line = 0;
        ++p;
        continue;
      }
      if (*p == ',') {
        ++p;
        continue;
      }
      // One segment: 1, 4 or 5 VLQ fields up to the next ',' or ';'.
      int n = 0;
      while (p < end && *p != ',' && *p != ';') {
        if (n == 5) return fail("more than 5 fields");
        int64_t value = 0;
        int shift = 0;
        bool more = true;
        while (more) {
          if (p == end) return fail("truncated VLQ value");
          int digit = kBase64[static_cast<unsigned char>(*p)];
          if (digit < 0) return fail(fmt::format("invalid VLQ character at byte {}", p - text.data()));
          ++p;
          if (shift > 30) return fail("VLQ value exceeds 32 bits");
          value |= static_cast<int64_t>(digit & 31) << shift;
          shift += 5;
          more = (digit & 32) != 0;
        }
        bool negative = value & 1;
        value >>= 1;
        field[n++] = negative ? -value : value;
      }
      if (n != 1 && n != 4 && n != 5) return fail(fmt::format("{} fields (expected 1, 4 or 5)", n));
      column += field[0];
      if (column < 0) return fail("negative generated column");
      SourceMap::Segment seg;
      int64_t gen_column = column + (line == 0 ? column_offset : 0);
      if (gen_column > std::numeric_limits<int32_t>::max()) return fail("generated column out of range");
      seg.generated_column = static_cast<uint32_t>(gen_column);
      if (n >= 4) {
        source += field[1];
        orig_line += field[2];
        orig_column += field[3];
        if (source < 0 || static_cast<size_t>(source) >= n_sources) {
          return fail(fmt::format("source index {} out of range (map has {} sources)", source, n_sources));
        }
        if (orig_line < 0 || orig_line > std::numeric_limits<int32_t>::max() || orig_column < 0 ||
            orig_column > std::numeric_limits<int32_t>::max()) {
          return fail(fmt::format("original position {}:{} out of range", orig_line, orig_column));
        }
        seg.source = static_cast<int32_t>(source_base + static_cast<size_t>(source));
        seg.original_line = static_cast<int32_t>(orig_line);
        seg.original_column = static_cast<int32_t>(orig_column);
        if (n == 5) {
          name += field[4];
          if (name < 0 || static_cast<size_t>(name) >= n_names) {
            return fail(fmt::format("name index {} out of range (map has {} names)", name, n_names));
          }
          seg.name = static_cast<int32_t>(name_base + static_cast<size_t>(name));
        }
      }
      uint64_t abs_line = uint64_t{line_offset} + line;
      if (abs_line > std::numeric_limits<int32_t>::max()) return fail("generated line out of range");
      if (Status st = Add(static_cast<uint32_t>(abs_line), seg); !st.ok()) return fail(st.message());
      ++segment_in_line;
    }
    return Status::Ok();
  }

  Status Add(uint32_t line, const SourceMap::Segment& seg) {
    auto& starts = map_.line_starts_;
    if (line + 1 < starts.size()) {
      return Error(ErrorCode::kDataLoss, "index map sections overlap or are out of order");
    }
    while (starts.size() <= line) starts.push_back(static_cast<uint32_t>(map_.segments_.size()));
    map_.segments_.push_back(seg);
    return Status::Ok();
  }

  std::string base_dir_;
  SourceMap map_;
};

}  // namespace internal

namespace {

// Where the JSON broke, without nlohmann's "last read: '...'" excerpt of the text.
std::string JsonErrorAt(const json::exception& e) {
  if (const auto* parse = dynamic_cast<const json::parse_error*>(&e)) {
    return fmt::format("invalid JSON at byte {}", parse->byte);
  }
  return "invalid JSON";
}

}  // namespace

Result<SourceMap> SourceMap::Parse(std::string_view text, std::string_view map_location) {
  std::optional<internal::BigValues> big = internal::FindBigValues(text);
  json j;
  try {
    j = json::parse(big ? std::string_view(big->reduced) : text);
  } catch (const json::exception& e) {
    if (big) {  // report positions in the text the caller gave
      try {
        j = json::parse(text);
      } catch (const json::exception& full) {
        return Error(ErrorCode::kDataLoss, JsonErrorAt(full));
      }
    }
    return Error(ErrorCode::kDataLoss, JsonErrorAt(e));
  }
  std::string base_dir;
  std::string local = internal::LocalPathOf(map_location);
  if (!local.empty()) base_dir = std::filesystem::path(local).parent_path().string();
  internal::SourceMapParser parser(std::move(base_dir));
  try {
    Status st = big ? parser.ParseSplit(j, *big) : parser.ParseAny(j, 0, 0, 0);
    if (!st.ok()) return st;
  } catch (const std::exception& e) {  // e.g. std::bad_alloc on absurd input
    return Error(ErrorCode::kDataLoss, fmt::format("source map could not be decoded: {}", e.what()));
  }
  return std::move(parser).Finish();
}

std::optional<std::string> SourceMap::source_content(size_t i) const {
  if (!contents_ || i >= sources_.size()) return std::nullopt;
  Contents& c = *contents_;
  std::call_once(c.once, [&c] {
    for (const Contents::Pending& p : c.pending) {
      json a = json::parse(p.json, nullptr, /*allow_exceptions=*/false);
      if (!a.is_array()) continue;  // a malformed sourcesContent only loses the contents
      for (size_t k = 0; k < a.size() && k < p.count; ++k) {
        if (a[k].is_string()) c.values[p.base + k] = a[k].get<std::string>();
      }
    }
    c.pending.clear();
  });
  return c.values[i];
}

std::optional<OriginalPosition> SourceMap::ToPosition(const Segment& s) const {
  if (s.source < 0) return std::nullopt;
  return OriginalPosition{static_cast<uint32_t>(s.source), int64_t{s.original_line} + 1, int64_t{s.original_column} + 1,
                          s.name, int64_t{s.generated_column} + 1};
}

namespace {
uint32_t ZeroBasedColumn(int64_t column) {
  if (column <= 1) return 0;
  return static_cast<uint32_t>(std::min<int64_t>(column - 1, std::numeric_limits<uint32_t>::max()));
}
}  // namespace

bool SourceMap::LineRange(int64_t line, size_t& begin, size_t& end) const {
  if (line < 1 || static_cast<uint64_t>(line) > generated_lines()) return false;
  begin = line_starts_[line - 1];
  end = line_starts_[line];
  return true;
}

std::optional<OriginalPosition> SourceMap::Lookup(int64_t line, int64_t column) const {
  size_t b, e;
  if (!LineRange(line, b, e)) return std::nullopt;
  // Search the dense column array: a long minified line stays in cache.
  size_t after =
      std::upper_bound(columns_.begin() + b, columns_.begin() + e, ZeroBasedColumn(column)) - columns_.begin();
  for (size_t p = after; p > b; --p) {
    if (segments_[p - 1].source >= 0) return ToPosition(segments_[p - 1]);
  }
  for (size_t p = after; p < e; ++p) {
    if (segments_[p].source >= 0) return ToPosition(segments_[p]);
  }
  return std::nullopt;
}

std::optional<OriginalPosition> SourceMap::MappingBefore(int64_t line, int64_t column) const {
  size_t b, e;
  if (!LineRange(line, b, e)) return std::nullopt;
  size_t at = std::lower_bound(columns_.begin() + b, columns_.begin() + e, ZeroBasedColumn(column)) - columns_.begin();
  if (at == b) return std::nullopt;
  return ToPosition(segments_[at - 1]);
}

std::optional<OriginalPosition> SourceMap::FirstOnLine(int64_t line) const {
  size_t b, e;
  if (!LineRange(line, b, e)) return std::nullopt;
  for (size_t i = b; i < e; ++i) {
    if (segments_[i].source >= 0) return ToPosition(segments_[i]);
  }
  return std::nullopt;
}

}  // namespace heapprof
