// Reading a worker's bindings from the files wrangler uses.
#include "heapprof/workload/bindings.h"

#include <fmt/format.h>

#include <cpptoml.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "heapprof/core/file_io.h"

namespace heapprof {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

Status Bad(std::string_view name, const std::string& message) {
  return Error(ErrorCode::kInvalidArgument, fmt::format("{}: {}", name, message));
}

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
    return Bad(name, "each kv_namespaces entry needs a binding (a string)");
  }
  std::string binding = entry["binding"].get<std::string>();
  if (bindings.FindKv(binding) == nullptr) bindings.kv.push_back({binding, {}});
  return Status::Ok();
}

Result<WorkerBindings> FromJson(const json& config, std::string_view name) {
  WorkerBindings bindings;
  if (!config.is_object()) return Bad(name, "the configuration must be an object");
  if (config.contains("vars")) {
    if (!config["vars"].is_object()) return Bad(name, "vars must be a table of name = value");
    for (const auto& [key, value] : config["vars"].items()) bindings.SetVar(key, value.dump());
  }
  if (config.contains("kv_namespaces")) {
    if (!config["kv_namespaces"].is_array()) return Bad(name, "kv_namespaces must be an array of tables");
    for (const json& entry : config["kv_namespaces"]) {
      if (Status s = AddKv(bindings, entry, name); !s.ok()) return s;
    }
  }
  return bindings;
}

std::string Trim(std::string_view s) {
  size_t a = s.find_first_not_of(" \t\r");
  if (a == std::string_view::npos) return {};
  size_t b = s.find_last_not_of(" \t\r");
  return std::string(s.substr(a, b - a + 1));
}

Result<std::string> Read(const std::string& path) { return ReadFileBytes(path); }

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
  std::istringstream in{std::string(text)};
  std::shared_ptr<cpptoml::table> config;
  try {
    cpptoml::parser parser(in);
    config = parser.parse();
  } catch (const std::exception& e) {
    return Bad(name, std::string("not valid TOML: ") + e.what());
  }
  return FromJson(TomlToJson(config), name);
}

Result<WorkerBindings> ParseWranglerJsonc(std::string_view text, std::string_view name) {
  json config = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false, /*ignore_comments=*/true);
  if (config.is_discarded()) return Bad(name, "not valid JSON (comments are allowed; trailing commas are not)");
  return FromJson(config, name);
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
        return Bad(fmt::format("{}:{}", name, line_no), "expected NAME=value");
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
  if (object.is_discarded() || !object.is_object()) return Bad(name, "expected a JSON object of name: value");
  for (const auto& [key, value] : object.items()) into.SetVar(key, value.dump());
  return Status::Ok();
}

Status ParseKvData(std::string_view text, std::string_view name, KvNamespace& into) {
  json object = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (object.is_discarded() || !object.is_object()) return Bad(name, "expected a JSON object of key: value");
  for (const auto& [key, value] : object.items()) {
    into.entries.emplace_back(key, value.is_string() ? value.get<std::string>() : value.dump());
  }
  return Status::Ok();
}

Result<LoadedBindings> LoadBindings(const BindingSources& sources) {
  LoadedBindings loaded;
  std::string config = sources.config;
  if (config.empty()) {
    fs::path dir = fs::path(sources.worker).parent_path();
    for (const char* candidate : {"wrangler.toml", "wrangler.jsonc", "wrangler.json"}) {
      std::error_code ec;
      if (fs::is_regular_file(dir / candidate, ec)) {
        config = (dir / candidate).string();
        break;
      }
    }
  }
  if (!config.empty()) {
    Result<std::string> text = Read(config);
    if (!text.ok()) return text.status();
    Result<WorkerBindings> parsed = fs::path(config).extension() == ".toml" ? ParseWranglerToml(text.value(), config)
                                                                             : ParseWranglerJsonc(text.value(), config);
    if (!parsed.ok()) return parsed.status();
    loaded.bindings = std::move(parsed).value();
    loaded.files.push_back(config);
    std::error_code ec;
    fs::path dev_vars = fs::path(config).parent_path() / ".dev.vars";
    if (fs::is_regular_file(dev_vars, ec)) {
      Result<std::string> vars = Read(dev_vars.string());
      if (!vars.ok()) return vars.status();
      if (Status s = ParseDevVars(vars.value(), dev_vars.string(), loaded.bindings); !s.ok()) return s;
      loaded.files.push_back(dev_vars.string());
    }
  }
  if (!sources.env_json.empty()) {
    Result<std::string> text = Read(sources.env_json);
    if (!text.ok()) return text.status();
    if (Status s = ParseEnvJson(text.value(), sources.env_json, loaded.bindings); !s.ok()) return s;
    loaded.files.push_back(sources.env_json);
  }
  for (const std::string& spec : sources.kv_data) {
    size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0) {
      return Error(ErrorCode::kInvalidArgument, fmt::format("--kv-data {}: expected BINDING=FILE", spec));
    }
    std::string binding = spec.substr(0, eq), file = spec.substr(eq + 1);
    KvNamespace* kv = loaded.bindings.FindKv(binding);
    if (kv == nullptr) {
      loaded.bindings.kv.push_back({binding, {}});
      kv = &loaded.bindings.kv.back();
    }
    Result<std::string> text = Read(file);
    if (!text.ok()) return text.status();
    if (Status s = ParseKvData(text.value(), file, *kv); !s.ok()) return s;
    loaded.files.push_back(file);
  }
  return loaded;
}

}  // namespace heapprof
