// What a runtime honours of a worker's configuration: the keys heapprof
// knows (KnownConfigKeys), the compatibility flags each runtime applies, and
// the verdict on a configuration (CheckWorkerConfig): every key not honoured
// named, and the ones the worker's code would call refused unless ignored.
#include "heapprof/workload/worker_config.h"

#include <fmt/format.h>

#include <algorithm>

#include "heapprof/workload/config_text.h"

namespace heapprof {
namespace {

using internal::ConfigError;
using internal::Contains;

const ConfigKeyInfo* FindKey(std::string_view key) {
  for (const ConfigKeyInfo& info : KnownConfigKeys()) {
    if (key == info.key) return &info;
  }
  return nullptr;
}

}  // namespace

const std::vector<ConfigKeyInfo>& KnownConfigKeys() {
  static const std::vector<ConfigKeyInfo> kKeys = {
      // What the worker is and which runtime behaviour it asks for.
      {"name", false, "the worker's name"},
      {"main", false, "the entry module"},
      {"compatibility_date", false, "the runtime behaviour of this date"},
      {"compatibility_flags", false, "runtime behaviours switched on or off (flags like nodejs_compat are needed)"},
      // Bindings: env.<name> the code calls.
      {"vars", true, "env vars"},
      {"kv_namespaces", true, "KV namespaces"},
      {"durable_objects", true, "Durable Object namespaces"},
      {"migrations", false, "Durable Object class migrations"},
      {"services", true, "service bindings to other workers"},
      {"r2_buckets", true, "R2 buckets"},
      {"d1_databases", true, "D1 databases"},
      {"queues.producers", true, "queue producers (env.<binding>.send)"},
      {"queues.consumers", false, "queue events for the queue() handler"},
      {"triggers", false, "scheduled events (crons) for the scheduled() handler"},
      {"ai", true, "the Workers AI binding"},
      {"browser", true, "the browser rendering binding"},
      {"vectorize", true, "Vectorize indexes"},
      {"hyperdrive", true, "Hyperdrive configurations"},
      {"analytics_engine_datasets", true, "Analytics Engine datasets"},
      {"send_email", true, "email sending bindings"},
      {"mtls_certificates", true, "mTLS certificate bindings"},
      {"dispatch_namespaces", true, "dispatch namespaces"},
      {"workflows", true, "Workflows bindings"},
      {"pipelines", true, "Pipelines bindings"},
      {"secrets_store_secrets", true, "Secrets Store bindings"},
      {"version_metadata", true, "the version metadata binding"},
      {"ratelimits", true, "rate limiting bindings"},
      {"worker_loaders", true, "worker loader bindings"},
      {"images", true, "the Images binding"},
      {"containers", true, "containers of Durable Objects"},
      {"assets", true, "static assets served before the worker (and their binding)"},
      {"site", true, "Workers Sites static content"},
      {"wasm_modules", true, "service-worker Wasm bindings"},
      {"text_blobs", true, "service-worker text bindings"},
      {"data_blobs", true, "service-worker data bindings"},
      {"unsafe", true, "bindings outside wrangler's schema"},
      {"secrets", true, "secrets required at deploy (their values come from .dev.vars)"},
      {"cloudchamber", true, "containers (Cloudchamber)"},
      {"connect", true, "outbound TCP connect bindings"},
      {"ai_search_namespaces", true, "AI Search namespaces"},
      {"ai_search", true, "AI Search bindings"},
      {"agent_memory", true, "agent memory bindings"},
      {"analytics", true, "analytics bindings"},
      {"media", true, "the Media binding"},
      {"stream", true, "the Stream binding"},
      {"k2", true, "K2 bindings"},
      {"artifacts", true, "artifacts bindings"},
      {"unsafe_hello_world", true, "an experimental binding"},
      {"flagship", true, "flagship bindings"},
      {"vpc_services", true, "VPC service bindings"},
      {"vpc_networks", true, "VPC network bindings"},
      {"python_modules", true, "Python Workers' modules"},
      {"exports", false, "the worker's exported classes and entrypoints, declared for deploy"},
      {"logfwdr", false, "deploy only"},
      {"access", false, "deploy only"},
      {"cache", false, "deploy only"},
      {"previews", false, "deploy only"},
      {"pages_build_output_dir", false, "Pages only"},
      {"dependencies_instrumentation", false, "deploy only"},
      {"addresses", false, "deploy only"},
      {"tail_consumers", false, "tail workers fed this worker's events"},
      {"streaming_tail_consumers", false, "streaming tail workers"},
      // Build-time: the bundle heapprof runs is already built.
      {"define", false, "build-time replacements (apply them when bundling)"},
      {"alias", false, "build-time module aliases (apply them when bundling)"},
      {"build", false, "the build command (heapprof runs main as built)"},
      {"rules", false, "bundling rules"},
      {"find_additional_modules", false, "bundling of extra modules"},
      {"base_dir", false, "bundling's base folder"},
      {"preserve_file_names", false, "bundling's file names"},
      {"no_bundle", false, "bundling switched off"},
      {"minify", false, "minification when bundling"},
      {"keep_names", false, "function names kept when bundling"},
      {"node_compat", false, "wrangler's legacy build-time Node.js polyfills"},
      {"tsconfig", false, "TypeScript settings for bundling"},
      {"jsx_factory", false, "JSX settings for bundling"},
      {"jsx_fragment", false, "JSX settings for bundling"},
      {"upload_source_maps", false, "deploy only"},
      // Deploy- and dashboard-only.
      {"$schema", false, "the editor's schema"},
      {"account_id", false, "deploy only"},
      {"workers_dev", false, "deploy only"},
      {"preview_urls", false, "deploy only"},
      {"route", false, "deploy only"},
      {"routes", false, "deploy only"},
      {"zone_id", false, "deploy only"},
      {"usage_model", false, "deploy only"},
      {"logpush", false, "deploy only"},
      {"observability", false, "deploy only"},
      {"send_metrics", false, "wrangler's own telemetry"},
      {"keep_vars", false, "deploy only"},
      {"legacy_env", false, "deploy only"},
      {"compliance_region", false, "deploy only"},
      {"first_party_worker", false, "deploy only"},
      {"placement", false, "where the platform runs the worker"},
      {"limits", false, "the platform's CPU limit (heapprof's is --request-timeout)"},
      {"dev", false, "wrangler dev's own settings"},
      {"env", false, "per-environment sections (--env NAME selects one)"},
  };
  return kKeys;
}

bool CompatibilityFlagIsNeeded(std::string_view flag) {
  // The Node.js compatibility flags decide whether node:* imports resolve and
  // Buffer / process exist: a worker built for them takes another path without.
  return flag == "nodejs_compat" || flag == "nodejs_compat_v2" || flag == "nodejs_als" || flag == "experimental" ||
         flag.starts_with("nodejs_compat_populate_process_env");
}

std::vector<std::string> FlagsHonoured(const WorkerConfig& config, const RuntimeSupport& support) {
  std::vector<std::string> out;
  for (const std::string& flag : config.compatibility_flags) {
    if (support.all_compatibility_flags || Contains(support.compatibility_flags, flag)) out.push_back(flag);
  }
  return out;
}

Result<ConfigVerdict> CheckWorkerConfig(const WorkerConfig& config, const RuntimeSupport& support,
                                        const std::vector<std::string>& ignore) {
  const std::string source = config.file.empty() ? std::string("the flags") : config.file;
  for (const std::string& key : ignore) {
    const bool flag = Contains(config.compatibility_flags, key);
    if (!Contains(config.keys, key) && !flag) {
      return ConfigError("--ignore-config-key " + key,
                         fmt::format("{} has no such key{}", source,
                                     config.compatibility_flags.empty() ? "" : " or compatibility flag"));
    }
  }
  ConfigVerdict verdict;
  std::vector<std::string> needed;  // not honoured and called by the code
  auto honoured = [&](const std::string& key) { return Contains(support.keys, key); };
  for (const std::string& key : config.keys) {
    if (key == "compatibility_flags" && !support.all_compatibility_flags) {
      for (const std::string& flag : config.compatibility_flags) {
        if (Contains(support.compatibility_flags, flag)) continue;
        const bool ignored = Contains(ignore, flag) || Contains(ignore, key);
        if (CompatibilityFlagIsNeeded(flag) && !ignored) {
          needed.push_back(fmt::format("compatibility flag {}", flag));
        } else {
          verdict.ignored.push_back(
              fmt::format("compatibility flag {}{}", flag, ignored ? " (--ignore-config-key)" : ""));
        }
      }
      continue;
    }
    if (honoured(key) && Contains(ignore, key)) {
      // Honoured, but the user asked to run without it (the caller drops it).
      const ConfigKeyInfo* info = FindKey(key);
      verdict.ignored.push_back(
          fmt::format("{} ({}; --ignore-config-key)", key, info != nullptr ? info->note : "given"));
      continue;
    }
    if (key == "compatibility_flags" || honoured(key)) {
      auto partly =
          std::find_if(support.partly.begin(), support.partly.end(), [&](const auto& p) { return p.first == key; });
      if (partly != support.partly.end()) verdict.ignored.push_back(fmt::format("{} ({})", key, partly->second));
      continue;
    }
    const ConfigKeyInfo* info = FindKey(key);
    if (info == nullptr) {
      verdict.ignored.push_back(key + " (unknown to heapprof)");
    } else if (info->needed && !Contains(ignore, key)) {
      needed.push_back(fmt::format("{} ({})", key, info->note));
    } else {
      verdict.ignored.push_back(fmt::format("{} ({}{})", key, info->note, info->needed ? "; --ignore-config-key" : ""));
    }
  }
  // A Durable Object class of another script: a runtime that runs only the
  // worker it is given cannot reach it.
  if (honoured("durable_objects") && !support.other_workers && !Contains(ignore, "durable_objects")) {
    for (const DurableObjectBinding& b : config.durable_objects) {
      if (!b.script_name.empty() && b.script_name != config.name) {
        return ConfigError(
            source, fmt::format("durable_objects binding {} has script_name = \"{}\": its class {} lives in the worker "
                                "\"{}\", which {} does not run (it runs the classes of the worker it is given): {}give "
                                "--ignore-config-key durable_objects to run without the binding",
                                b.name, b.script_name, b.class_name, b.script_name, support.runtime,
                                support.instead.empty()
                                    ? std::string()
                                    : fmt::format("{} --service {}=FOLDER, or ", support.instead, b.script_name)));
      }
    }
  }
  if (!needed.empty()) {
    return Error(ErrorCode::kInvalidArgument,
                 fmt::format("{}: {} cannot honour {}, which the worker's code would call: {} "
                             "--ignore-config-key KEY to run without it",
                             source, support.runtime, fmt::join(needed, ", "),
                             support.instead.empty() ? "give" : support.instead + ", or give"));
  }
  if (!verdict.ignored.empty()) {
    verdict.warning =
        fmt::format("{}: not honoured by {}: {}", source, support.runtime, fmt::join(verdict.ignored, ", "));
  }
  return verdict;
}

}  // namespace heapprof
