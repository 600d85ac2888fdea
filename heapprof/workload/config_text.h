// The text of a wrangler configuration as JSON: TOML (wrangler.toml) or JSON
// with comments (wrangler.jsonc), so one reader serves both. Internal to the
// configuration model (bindings.cpp, worker_config*.cpp).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "heapprof/core/status.h"
#include "heapprof/workload/bindings.h"

namespace heapprof::internal {

// TOML when `toml`, else JSON with comments; `name` prefixes messages.
Result<nlohmann::json> ParseConfigText(std::string_view text, std::string_view name, bool toml);

// An invalid-argument error: "name: message".
Status ConfigError(std::string_view name, const std::string& message);

bool Contains(const std::vector<std::string>& list, std::string_view item);

// The configuration's [vars] and kv_namespaces as bindings.
Result<WorkerBindings> BindingsFromConfig(const nlohmann::json& config, std::string_view name);

}  // namespace heapprof::internal
