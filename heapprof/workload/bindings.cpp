// Reading a worker's bindings from the files wrangler uses.
#include "heapprof/workload/bindings.h"

#include <fmt/format.h>

#include <cpptoml.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>

#include "heapprof/workload/config_text.h"

namespace heapprof {
namespace {

using internal::ConfigError;
using nlohmann::json;

// A TOML value as JSON (vars may be strings, numbers, booleans, arrays or tables).
json TomlToJson(const std::shared_ptr<cpptoml::base>& value) {
  if (auto s = value->as<std::string>()) return s->get();
  if (auto i = value->as<int64_t>()) return i->get();
  if (auto d = value->as<double>()) return d->get();
  if (auto b = value->as<bool>()) return b->get();
  if (value->is_table()) {
    json object = json::object();
    for (const auto& [key, member] : *value->as_table()) object[key] = TomlToJson(member);
    return object;
  }
  if (value->is_array()) {
    json array = json::array();
    for (const auto& item : *value->as_array()) array.push_back(TomlToJson(item));
    return array;
  }
  if (value->is_table_array()) {
    json array = json::array();
    for (const auto& table : *value->as_table_array()) array.push_back(TomlToJson(table));
    return array;
  }
  return json(nullptr);  // dates and times: not a var type wrangler accepts
}

Status AddKv(WorkerBindings& bindings, const json& entry, std::string_view name) {
  if (!entry.is_object() || !entry.contains("binding") || !entry["binding"].is_string()) {
    return ConfigError(name, "each kv_namespaces entry needs a binding (a string)");
  }
  std::string binding = entry["binding"].get<std::string>();
  if (bindings.FindKv(binding) == nullptr) bindings.kv.push_back({binding, {}});
  return Status::Ok();
}

// wrangler reads its JSON config as JSONC, which allows a comma before a
// closing bracket; nlohmann's parser (3.11, Debian's) allows comments but not
// those commas. So each such comma becomes a space (offsets, and so the
// parser's line and column, stay those of the file). A scan of its own
// because it must skip strings and comments exactly as the parser does.
std::string BlankTrailingCommas(std::string_view text) {
  std::string out(text);
  // The index of the next character that is not blank or inside a comment.
  auto next_token = [&](size_t i) {
    while (i < out.size()) {
      const char c = out[i];
      if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
        ++i;
      } else if (c == '/' && i + 1 < out.size() && out[i + 1] == '/') {
        i = out.find('\n', i);
        if (i == std::string::npos) return out.size();
      } else if (c == '/' && i + 1 < out.size() && out[i + 1] == '*') {
        i = out.find("*/", i + 2);
        if (i == std::string::npos) return out.size();
        i += 2;
      } else {
        break;
      }
    }
    return i;
  };
  for (size_t i = 0; i < out.size(); ++i) {
    const char c = out[i];
    if (c == '"') {
      for (++i; i < out.size() && out[i] != '"'; ++i) {
        if (out[i] == '\\') ++i;
      }
    } else if (c == '/' && i + 1 < out.size() && (out[i + 1] == '/' || out[i + 1] == '*')) {
      i = next_token(i) - 1;
    } else if (c == ',') {
      const size_t after = next_token(i + 1);
      if (after < out.size() && (out[after] == '}' || out[after] == ']')) out[i] = ' ';
    }
  }
  return out;
}

struct LineColumn {
  size_t line = 1, column = 1;
};

LineColumn LineColumnAt(std::string_view text, size_t offset) {
  LineColumn at;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++at.line;
      at.column = 1;
    } else {
      ++at.column;
    }
  }
  return at;
}

// nlohmann's message without its "[json.exception.parse_error.101] parse
// error at line 3, column 5: " prefix (the position is given once, ours).
std::string ParserReason(std::string_view what) {
  const size_t colon = what.find(": ");
  return std::string(colon == std::string_view::npos ? what : what.substr(colon + 2));
}

}  // namespace

namespace internal {

Status ConfigError(std::string_view name, const std::string& message) {
  return Error(ErrorCode::kInvalidArgument, fmt::format("{}: {}", name, message));
}

bool Contains(const std::vector<std::string>& list, std::string_view item) {
  return std::find(list.begin(), list.end(), item) != list.end();
}

Result<json> ParseConfigText(std::string_view text, std::string_view name, bool toml) {
  if (toml) {
    std::istringstream in{std::string(text)};
    std::shared_ptr<cpptoml::table> config;
    try {
      cpptoml::parser parser(in);
      config = parser.parse();
    } catch (const std::exception& e) {
      return ConfigError(name, std::string("not valid TOML: ") + e.what());
    }
    return TomlToJson(config);
  }
  const std::string json_text = BlankTrailingCommas(text);
  try {
    return json::parse(json_text, nullptr, /*allow_exceptions=*/true, /*ignore_comments=*/true);
  } catch (const json::parse_error& e) {
    const LineColumn at = LineColumnAt(json_text, e.byte == 0 ? 0 : e.byte - 1);
    return ConfigError(
        name, fmt::format("not valid JSON at line {}, column {}: {}", at.line, at.column, ParserReason(e.what())));
  }
}

Result<WorkerBindings> BindingsFromConfig(const json& config, std::string_view name) {
  WorkerBindings bindings;
  if (!config.is_object()) return ConfigError(name, "the configuration must be an object");
  if (config.contains("vars")) {
    if (!config["vars"].is_object()) return ConfigError(name, "vars must be a table of name = value");
    for (const auto& [key, value] : config["vars"].items()) bindings.SetVar(key, value.dump());
  }
  if (config.contains("kv_namespaces")) {
    if (!config["kv_namespaces"].is_array()) return ConfigError(name, "kv_namespaces must be an array of tables");
    for (const json& entry : config["kv_namespaces"]) {
      if (Status s = AddKv(bindings, entry, name); !s.ok()) return s;
    }
  }
  return bindings;
}

}  // namespace internal

namespace {

std::string Trim(std::string_view s) {
  size_t a = s.find_first_not_of(" \t\r");
  if (a == std::string_view::npos) return {};
  size_t b = s.find_last_not_of(" \t\r");
  return std::string(s.substr(a, b - a + 1));
}

}  // namespace

void WorkerBindings::SetVar(const std::string& name, std::string json_text) {
  for (auto& [key, value] : vars) {
    if (key == name) {
      value = std::move(json_text);
      return;
    }
  }
  vars.emplace_back(name, std::move(json_text));
}

KvNamespace* WorkerBindings::FindKv(std::string_view binding) {
  for (KvNamespace& ns : kv) {
    if (ns.binding == binding) return &ns;
  }
  return nullptr;
}

Result<WorkerBindings> ParseWranglerToml(std::string_view text, std::string_view name) {
  Result<json> config = internal::ParseConfigText(text, name, /*toml=*/true);
  if (!config.ok()) return config.status();
  return internal::BindingsFromConfig(config.value(), name);
}

Result<WorkerBindings> ParseWranglerJsonc(std::string_view text, std::string_view name) {
  Result<json> config = internal::ParseConfigText(text, name, /*toml=*/false);
  if (!config.ok()) return config.status();
  return internal::BindingsFromConfig(config.value(), name);
}

Status ParseDevVars(std::string_view text, std::string_view name, WorkerBindings& into) {
  size_t line_no = 0, start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string line = Trim(text.substr(start, end - start));
    ++line_no;
    start = end + 1;
    if (!line.empty() && line[0] != '#') {
      if (line.rfind("export ", 0) == 0) line = Trim(line.substr(7));
      size_t eq = line.find('=');
      if (eq == std::string::npos || Trim(line.substr(0, eq)).empty()) {
        return ConfigError(fmt::format("{}:{}", name, line_no), "expected NAME=value");
      }
      std::string value = Trim(line.substr(eq + 1));
      if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') && value.back() == value.front()) {
        value = value.substr(1, value.size() - 2);
      }
      into.SetVar(Trim(line.substr(0, eq)), json(value).dump());
    }
    if (end == text.size()) break;
  }
  return Status::Ok();
}

Status ParseEnvJson(std::string_view text, std::string_view name, WorkerBindings& into) {
  json object = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (object.is_discarded() || !object.is_object()) return ConfigError(name, "expected a JSON object of name: value");
  for (const auto& [key, value] : object.items()) into.SetVar(key, value.dump());
  return Status::Ok();
}

Status ParseKvData(std::string_view text, std::string_view name, KvNamespace& into) {
  json object = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (object.is_discarded() || !object.is_object()) return ConfigError(name, "expected a JSON object of key: value");
  for (const auto& [key, value] : object.items()) {
    into.entries.emplace_back(key, value.is_string() ? value.get<std::string>() : value.dump());
  }
  return Status::Ok();
}

}  // namespace heapprof
