#include "heapprof/core/symbolizer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <set>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "heapprof/core/profile_tables.h"
#include "heapprof/core/text.h"

namespace heapprof {
namespace {

constexpr std::string_view kCommentKey = "source_maps";
constexpr std::string_view kWarningKey = "source_map_warning";
constexpr size_t kMaxWarningComments = 10;

bool StartsWith(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

// What one script contributes: its map and, per source and name index of
// the map, the profile string already interned for it (kNone until needed).
constexpr uint32_t kNone = UINT32_MAX;
struct ScriptState {
  std::string name;
  const SourceMap* map = nullptr;
  size_t outside = 0;               // frames the map should have covered but has nothing for
  std::set<std::string> generated;  // names of the frames in code the map never described
  std::vector<uint32_t> source_ids;
  std::vector<uint32_t> name_ids;
};

StringId Cached(std::vector<uint32_t>& cache, size_t index, const std::string& text, internal::StringInterner& intern) {
  if (cache[index] == kNone) cache[index] = static_cast<uint32_t>(intern(text));
  return StringId{cache[index]};
}

// The original of one generated function position.
struct Mapped {
  StringId name{};
  StringId filename{};
  int64_t line = 0;
  int64_t column = 0;
};

// V8 reports a function at its SharedFunctionInfo start position: the '(' of
// the parameter list (or the single parameter of an arrow written without
// parentheses), not the `function` keyword or the name. The mapping at or
// before that column gives the original position; the mapping just before
// it is the function's name token, which carries the original name when a
// minifier renamed the function.
std::optional<Mapped> MapFunction(ScriptState& script, internal::StringInterner& intern, StringId generated_id,
                                  std::string_view generated_name, int64_t line, int64_t column) {
  const SourceMap& map = *script.map;
  std::optional<OriginalPosition> pos = column > 0 ? map.Lookup(line, column) : map.FirstOnLine(line);
  if (!pos) return std::nullopt;
  // generated_name views the profile's string table: read it before interning
  // anything, since a new string can move the table.
  const bool anonymous = internal::IsAnonymousFunctionName(generated_name);
  Mapped m;
  m.filename = Cached(script.source_ids, pos->source, map.sources()[pos->source], intern);
  m.line = pos->line;
  m.column = pos->column;
  std::optional<OriginalPosition> name_token;
  // A V8-anonymous function has no name token: the one before it belongs to something else.
  if (column > 0 && !anonymous) name_token = map.MappingBefore(line, column);
  if (name_token && name_token->name >= 0 && name_token->source == pos->source &&
      !map.names()[name_token->name].empty()) {
    m.name = Cached(script.name_ids, name_token->name, map.names()[name_token->name], intern);
  } else if (anonymous) {
    m.name = intern(internal::AnonymousFunctionName(map.sources()[pos->source], m.line, m.column));
  } else {
    m.name = generated_id;
  }
  return m;
}

struct FunctionKey {
  StringId name, system_name, filename;
  int64_t start_line;
  bool operator==(const FunctionKey&) const = default;
};
struct FunctionKeyHash {
  size_t operator()(const FunctionKey& k) const {
    uint64_t h = static_cast<uint32_t>(k.name);
    h = h * 0x9E3779B97F4A7C15ull ^ static_cast<uint32_t>(k.system_name);
    h = h * 0x9E3779B97F4A7C15ull ^ static_cast<uint32_t>(k.filename);
    h = h * 0x9E3779B97F4A7C15ull ^ static_cast<uint64_t>(k.start_line);
    return static_cast<size_t>(h ^ (h >> 29));
  }
};

}  // namespace

SymbolizeResult Symbolize(Profile& profile, SourceMapProvider& provider) {
  SymbolizeResult result;
  internal::StringInterner intern(profile, 2 * profile.locations.size());

  // One state per script, found by the filename's string id.
  std::vector<ScriptState> scripts;
  std::unordered_map<uint32_t, size_t> script_index;
  auto script_state = [&](StringId filename) -> ScriptState& {
    auto [it, added] = script_index.emplace(static_cast<uint32_t>(filename), scripts.size());
    if (!added) return scripts[it->second];
    ScriptState st;
    st.name = std::string(profile.str(filename));
    Result<const SourceMap*> m = provider.MapFor(st.name);
    if (!m.ok()) {
      result.warnings.push_back(fmt::format("{}: frames left unmapped: {}", st.name, m.status().message()));
    } else if (m.value() != nullptr) {
      st.map = m.value();
      st.source_ids.assign(st.map->sources().size(), kNone);
      st.name_ids.assign(st.map->names().size(), kNone);
    }
    scripts.push_back(std::move(st));
    return scripts.back();
  };

  // Functions are rebuilt: a generated function may split into several
  // originals (two minified "e"s on one line) and several may merge.
  std::unordered_map<FunctionKey, FunctionId, FunctionKeyHash> function_index;
  function_index.reserve(profile.locations.size() + profile.functions.size());
  std::vector<Function> functions;
  functions.reserve(profile.functions.size());
  auto function_id = [&](StringId name, StringId system_name, StringId filename, int64_t start_line) {
    auto [it, added] = function_index.emplace(FunctionKey{name, system_name, filename, start_line},
                                              FunctionId{static_cast<uint32_t>(functions.size() + 1)});
    if (added) functions.push_back(Function{it->second, name, system_name, filename, start_line});
    return it->second;
  };

  const std::vector<Function> old_functions = profile.functions;
  auto old_function = [&](const Line& ln) -> const Function& {
    return old_functions.at(static_cast<uint32_t>(ln.function) - 1);
  };
  for (Location& loc : profile.locations) {
    for (Line& ln : loc.lines) {
      const Function& f = old_function(ln);
      std::optional<Mapped> mapped;
      if (f.filename != StringId{0}) {  // VM-state frames have no file and are not counted
        ++result.frames;
        if (f.system_name != StringId{0}) {
          ++result.mapped;  // rewritten by an earlier run
        } else if (ScriptState& st = script_state(f.filename); st.map == nullptr) {
          ++result.without_map;
        } else {
          int64_t gen_line = ln.line > 0 ? ln.line : f.start_line;
          if (gen_line > 0) mapped = MapFunction(st, intern, f.name, profile.str(f.name), gen_line, ln.column);
          if (mapped) {
            ++result.mapped;
          } else {
            ++result.outside_map;
            // A map should cover every line it reaches: a frame past its last
            // line, or any unmapped frame when the map is older than its
            // script, says the map is of another build. An unmapped line the
            // map reaches is code the compiler wrote (esbuild's __spreadValues,
            // tsc's __awaiter and the state machines it wraps bodies in).
            const bool past_end = gen_line > static_cast<int64_t>(st.map->generated_lines());
            if (gen_line > 0 && !past_end && !provider.MapOlderThanScript(st.name)) {
              ++result.generated;
              if (st.generated.size() < 8) st.generated.insert(std::string(profile.str(f.name)));
            } else {
              ++st.outside;
            }
          }
        }
      }
      if (!mapped) {
        ln.function = function_id(f.name, f.system_name, f.filename, f.start_line);
        continue;
      }
      StringId system_name = mapped->name == f.name ? StringId{0} : f.name;
      ln.function = function_id(mapped->name, system_name, mapped->filename, mapped->line);
      ln.line = mapped->line;
      ln.column = mapped->column;
    }
  }
  profile.functions = std::move(functions);

  result.scripts = scripts.size();
  std::sort(scripts.begin(), scripts.end(), [](const ScriptState& a, const ScriptState& b) { return a.name < b.name; });
  std::set<std::string> helpers;
  for (ScriptState& st : scripts) {
    if (st.map) ++result.scripts_with_map;
    helpers.merge(st.generated);
    if (st.outside == 0) continue;
    if (std::optional<double> older = provider.MapOlderThanScript(st.name)) {
      result.warnings.push_back(fmt::format(
          "{}: its source map is {:.0f} s older than the script (was the script rebuilt without its map?); {} "
          "frame(s) the map has no position for left unmapped",
          st.name, *older, st.outside));
    } else {
      result.warnings.push_back(fmt::format(
          "{}: {} frame(s) fall past the last line its source map covers (is the map stale?); left unmapped", st.name,
          st.outside));
    }
  }

  // Replace the comments of an earlier run rather than stacking them.
  const std::string summary_prefix = fmt::format("{}: ", kCommentKey);
  const std::string warning_prefix = fmt::format("{}: ", kWarningKey);
  std::erase_if(profile.comments, [&](StringId c) {
    std::string_view text = profile.str(c);
    return StartsWith(text, summary_prefix) || StartsWith(text, warning_prefix);
  });
  std::string summary = fmt::format("{}{} of {} script frames mapped", summary_prefix, result.mapped, result.frames);
  if (result.without_map) summary += fmt::format("; {} without a map", result.without_map);
  if (result.outside_map > result.generated) {
    summary += fmt::format("; {} outside their map", result.outside_map - result.generated);
  }
  if (result.generated) {
    std::string names;
    for (const std::string& n : helpers) names += (names.empty() ? "" : ", ") + (n.empty() ? "(anonymous)" : n);
    summary += fmt::format("; {} in generated code no map describes ({})", result.generated, names);
  }
  profile.comments.push_back(intern(summary));
  for (size_t i = 0; i < result.warnings.size() && i < kMaxWarningComments; ++i) {
    profile.comments.push_back(intern(warning_prefix + result.warnings[i]));
  }
  return result;
}

}  // namespace heapprof
