#include "heapprof/symbolizer.h"

#include <fmt/format.h>
#include <map>
#include <optional>
#include <string_view>
#include <tuple>
#include <unordered_map>

namespace heapprof {
namespace {

constexpr std::string_view kCommentKey = "source_maps";
constexpr std::string_view kWarningKey = "source_map_warning";
constexpr size_t kMaxWarningComments = 10;

// Interns into an existing profile, reusing the strings it already has.
class Interner {
 public:
  explicit Interner(Profile& p) : profile_(p) {
    for (size_t i = 0; i < p.strings.size(); ++i) index_.emplace(p.strings[i], StringId{static_cast<uint32_t>(i)});
  }
  StringId operator()(const std::string& s) {
    auto it = index_.find(s);
    if (it != index_.end()) return it->second;
    StringId id = profile_.AddString(s);
    index_.emplace(s, id);
    return id;
  }

 private:
  Profile& profile_;
  std::unordered_map<std::string, StringId> index_;
};

std::string_view BaseName(std::string_view path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// profile_builder names anonymous functions "(anonymous file:line:col)".
bool IsAnonymous(std::string_view name) { return name.empty() || name.substr(0, 10) == "(anonymous"; }

bool StartsWith(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

// Where the original of one generated function position is.
struct Mapped {
  std::string name;
  std::string filename;
  int64_t line = 0;
  int64_t column = 0;
};

// V8 reports a function at its SharedFunctionInfo start position: the '(' of
// the parameter list (or the single parameter of an arrow written without
// parentheses), not the `function` keyword or the name. The mapping at or
// before that column gives the original position; the mapping just before
// it is the function's name token, which carries the original name when a
// minifier renamed the function.
std::optional<Mapped> MapFunction(const SourceMap& map, std::string_view generated_name, int64_t line,
                                  int64_t column) {
  std::optional<OriginalPosition> pos = column > 0 ? map.Lookup(line, column) : map.FirstOnLine(line);
  if (!pos) return std::nullopt;
  Mapped m;
  m.filename = map.sources()[pos->source];
  m.line = pos->line;
  m.column = pos->column;
  std::optional<OriginalPosition> name_token;
  // A V8-anonymous function has no name token: the one before it belongs to something else.
  if (column > 0 && !IsAnonymous(generated_name)) name_token = map.MappingBefore(line, column);
  if (name_token && name_token->name >= 0 && name_token->source == pos->source &&
      !map.names()[name_token->name].empty()) {
    m.name = map.names()[name_token->name];
  } else if (IsAnonymous(generated_name)) {
    m.name = fmt::format("(anonymous {}:{}:{})", BaseName(m.filename), m.line, m.column);
  } else {
    m.name = std::string(generated_name);
  }
  return m;
}

}  // namespace

SymbolizeResult Symbolize(Profile& profile, SourceMapProvider& provider) {
  SymbolizeResult result;
  Interner intern(profile);

  struct ScriptState {
    const SourceMap* map = nullptr;
    size_t outside = 0;
  };
  std::map<std::string, ScriptState> scripts;  // ordered: warnings come out in a stable order
  auto script_state = [&](const std::string& name) -> ScriptState& {
    auto it = scripts.find(name);
    if (it != scripts.end()) return it->second;
    ScriptState st;
    Result<const SourceMap*> m = provider.MapFor(name);
    if (!m.ok()) {
      result.warnings.push_back(fmt::format("{}: frames left unmapped: {}", name, m.status().message()));
    } else {
      st.map = m.value();
    }
    return scripts.emplace(name, st).first->second;
  };

  // Functions are rebuilt: a generated function may split into several
  // originals (two minified "e"s on one line) and several may merge.
  using Key = std::tuple<StringId, StringId, StringId, int64_t>;  // name, system_name, filename, start_line
  std::map<Key, FunctionId> function_index;
  std::vector<Function> functions;
  auto function_id = [&](StringId name, StringId system_name, StringId filename, int64_t start_line) {
    Key key{name, system_name, filename, start_line};
    auto it = function_index.find(key);
    if (it != function_index.end()) return it->second;
    FunctionId id{static_cast<uint32_t>(functions.size() + 1)};
    functions.push_back(Function{id, name, system_name, filename, start_line});
    function_index.emplace(key, id);
    return id;
  };

  const std::vector<Function> old_functions = profile.functions;
  for (Location& loc : profile.locations) {
    for (Line& ln : loc.lines) {
      const Function& f = old_functions.at(static_cast<uint32_t>(ln.function) - 1);
      const std::string filename(profile.str(f.filename));
      bool is_script_frame = !filename.empty();
      std::optional<Mapped> mapped;
      if (is_script_frame) {
        ++result.frames;
        if (f.system_name != StringId{0}) {
          ++result.mapped;  // rewritten by an earlier run
        } else if (ScriptState& st = script_state(filename); st.map == nullptr) {
          ++result.without_map;
        } else {
          int64_t gen_line = ln.line > 0 ? ln.line : f.start_line;
          if (gen_line > 0) mapped = MapFunction(*st.map, profile.str(f.name), gen_line, ln.column);
          if (mapped) {
            ++result.mapped;
          } else {
            ++result.outside_map;
            ++st.outside;
          }
        }
      }
      if (!mapped) {
        ln.function = function_id(f.name, f.system_name, f.filename, f.start_line);
        continue;
      }
      StringId name = intern(mapped->name);
      StringId system_name = name == f.name ? StringId{0} : f.name;
      ln.function = function_id(name, system_name, intern(mapped->filename), mapped->line);
      ln.line = mapped->line;
      ln.column = mapped->column;
    }
  }
  profile.functions = std::move(functions);

  result.scripts = scripts.size();
  for (const auto& [name, st] : scripts) {
    if (st.map) ++result.scripts_with_map;
    if (st.outside) {
      result.warnings.push_back(fmt::format(
          "{}: {} frame(s) fall outside its source map (is the map stale?); left unmapped", name, st.outside));
    }
  }

  // Replace the comments of an earlier run rather than stacking them.
  std::erase_if(profile.comments, [&](StringId c) {
    std::string_view text = profile.str(c);
    return StartsWith(text, fmt::format("{}: ", kCommentKey)) || StartsWith(text, fmt::format("{}: ", kWarningKey));
  });
  std::string summary = fmt::format("{}: {} of {} script frames mapped", kCommentKey, result.mapped, result.frames);
  if (result.without_map) summary += fmt::format("; {} without a map", result.without_map);
  if (result.outside_map) summary += fmt::format("; {} outside their map", result.outside_map);
  profile.comments.push_back(intern(summary));
  for (size_t i = 0; i < result.warnings.size() && i < kMaxWarningComments; ++i) {
    profile.comments.push_back(intern(fmt::format("{}: {}", kWarningKey, result.warnings[i])));
  }
  return result;
}

}  // namespace heapprof
