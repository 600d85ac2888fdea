// The workerd config of `heapprof run --runtime workerd`: one service per
// worker (the profiled one on the HTTP socket, the workers its service
// bindings name, an outbound worker when --fetch-handler gives one), one
// service per KV namespace (heapprof's in-memory store, preloaded), Durable
// Object namespaces with in-memory storage.
#include "heapprof/remote/workerd_config.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <regex>

#include "heapprof/remote/workerd_kv_store.h"

namespace heapprof::remote {

std::string CapnpQuote(std::string_view s) {
  // Cap'n Proto's escapes are C's: a raw newline would end the literal (a
  // parse error), so control characters become \xHH; other bytes (UTF-8
  // included) go through.
  std::string out = "\"";
  for (char c : s) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (byte < 0x20 || byte == 0x7f) {
      out += fmt::format("\\x{:02x}", byte);
    } else {
      out += c;
    }
  }
  return out + "\"";
}

RuntimeSupport WorkerdRuntimeSupport() {
  RuntimeSupport support;
  support.runtime = "heapprof's workerd mode";
  support.keys = {"name",    "main",          "compatibility_date", "compatibility_flags",
                  "vars",    "kv_namespaces", "durable_objects",    "migrations",
                  "services"};
  support.all_compatibility_flags = true;  // workerd's own; it refuses one it does not know
  support.module_rules = true;             // each module's type is written into its config
  support.other_workers = true;            // a Durable Object's script_name: found as services are
  return support;
}

WorkerdWorker WorkerdWorkerFor(const WorkerConfig& config, std::string service, std::string script) {
  WorkerdWorker w;
  w.service = std::move(service);
  w.script = std::move(script);
  if (!config.compatibility_date.empty()) w.compatibility_date = config.compatibility_date;
  w.compatibility_flags = config.compatibility_flags;
  for (const auto& [name, value] : config.bindings.vars) {
    nlohmann::json parsed = nlohmann::json::parse(value, nullptr, /*allow_exceptions=*/false);
    if (parsed.is_string()) {
      w.bindings.push_back({name, WorkerdBinding::Kind::kText, parsed.get<std::string>(), "", ""});
    } else {
      w.bindings.push_back({name, WorkerdBinding::Kind::kJson, value, "", ""});
    }
  }
  for (const KvNamespace& ns : config.bindings.kv) {
    w.kv.push_back(ns);
    w.bindings.push_back({ns.binding, WorkerdBinding::Kind::kKv, ns.binding, "", ""});
  }
  for (const DurableObjectBinding& b : config.durable_objects) {
    const bool other = !b.script_name.empty() && b.script_name != config.name;
    w.bindings.push_back({b.name, WorkerdBinding::Kind::kDurableObject, b.class_name, "", other ? b.script_name : ""});
  }
  if (!config.durable_objects.empty()) w.durable_objects = config.DurableObjectClasses();
  for (size_t i = 1; i < config.modules.size(); ++i) w.modules.push_back(config.modules[i]);
  for (const ServiceBinding& s : config.services) {
    w.bindings.push_back({s.binding, WorkerdBinding::Kind::kService, s.service, s.entrypoint, ""});
  }
  return w;
}

bool LooksLikeEsModule(std::string_view script) {
  // An export statement (minified bundles end in `export{x as default}`), or
  // no fetch listener of a service-worker script.
  static const std::regex kExport(R"((^|[\n;}])\s*export(\s*[{*]|\s+(default|const|let|var|function|class|async)\b))");
  static const std::regex kListener(R"(addEventListener\s*\(\s*["'`]fetch["'`])");
  if (std::regex_search(script.begin(), script.end(), kExport)) return true;
  return !std::regex_search(script.begin(), script.end(), kListener);
}

namespace {

constexpr char kOutboundService[] = "heapprof-outbound";  // --fetch-handler

std::string KvService(const WorkerdWorker& w, const KvNamespace& ns) {
  return fmt::format("{}-kv-{}", w.service, ns.binding);
}

std::string List(const std::vector<std::string>& items, const char* separator = ", ") {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : separator) + item;
  return out;
}

std::string Binding(const WorkerdWorker& w, const WorkerdBinding& b) {
  const std::string name = CapnpQuote(b.name);
  switch (b.kind) {
    case WorkerdBinding::Kind::kText:
      return fmt::format("(name = {}, text = {})", name, CapnpQuote(b.value));
    case WorkerdBinding::Kind::kJson:
      return fmt::format("(name = {}, json = {})", name, CapnpQuote(b.value));
    case WorkerdBinding::Kind::kKv:
      return fmt::format("(name = {}, kvNamespace = {})", name, CapnpQuote(KvService(w, {b.value, {}})));
    case WorkerdBinding::Kind::kDurableObject:
      if (b.script.empty()) {
        return fmt::format("(name = {}, durableObjectNamespace = (className = {}))", name, CapnpQuote(b.value));
      }
      return fmt::format("(name = {}, durableObjectNamespace = (className = {}, serviceName = {}))", name,
                         CapnpQuote(b.value), CapnpQuote(b.script));
    case WorkerdBinding::Kind::kService:
      if (b.entrypoint.empty()) return fmt::format("(name = {}, service = {})", name, CapnpQuote(b.value));
      return fmt::format("(name = {}, service = (name = {}, entrypoint = {}))", name, CapnpQuote(b.value),
                         CapnpQuote(b.entrypoint));
  }
  return "";
}

// workerd's field for a module of each wrangler type.
const char* ModuleField(ModuleType type) {
  switch (type) {
    case ModuleType::kEsModule:
      return "esModule";
    case ModuleType::kCommonJs:
      return "commonJsModule";
    case ModuleType::kText:
      return "text";
    case ModuleType::kData:
      return "data";
    case ModuleType::kCompiledWasm:
      return "wasm";
  }
  return "esModule";
}

std::string Code(const WorkerdModule& m) {
  if (!m.es_module) return fmt::format("serviceWorkerScript = embed {},", CapnpQuote(m.embed));
  std::string modules = fmt::format("(name = {}, esModule = embed {})", CapnpQuote(m.name), CapnpQuote(m.embed));
  for (const WorkerdModule::Extra& e : m.extras) {
    modules +=
        fmt::format(", (name = {}, {} = embed {})", CapnpQuote(e.name), ModuleField(e.type), CapnpQuote(e.embed));
  }
  return fmt::format("modules = [ {} ],", modules);
}

std::string Worker(const WorkerdWorker& w, const WorkerdModule& m, bool outbound) {
  std::vector<std::string> flags, bindings;
  for (const std::string& f : w.compatibility_flags) flags.push_back(CapnpQuote(f));
  for (const WorkerdBinding& b : w.bindings) bindings.push_back(Binding(w, b));
  std::string text = fmt::format(
      "(\n    {}\n    compatibilityDate = {},\n    compatibilityFlags = [ {} ],\n"
      "    bindings = [\n      {}\n    ],\n",
      Code(m), CapnpQuote(w.compatibility_date), List(flags), List(bindings, ",\n      "));
  if (!w.durable_objects.empty()) {
    std::vector<std::string> namespaces;
    for (const DurableObjectClass& c : w.durable_objects) {
      namespaces.push_back(fmt::format("(className = {}, uniqueKey = {}{})", CapnpQuote(c.name),
                                       CapnpQuote(w.service + "-" + c.name), c.sqlite ? ", enableSql = true" : ""));
    }
    text += fmt::format("    durableObjectNamespaces = [ {} ],\n    durableObjectStorage = (inMemory = void),\n",
                        List(namespaces));
  }
  if (outbound) text += fmt::format("    globalOutbound = {},\n", CapnpQuote(kOutboundService));
  return text + "  )";
}

}  // namespace

WorkerdConfigText WorkerdConfig(const WorkerdSpec& spec, const std::vector<WorkerdModule>& modules,
                                uint16_t http_port) {
  WorkerdConfigText out;
  std::vector<const WorkerdWorker*> workers = {&spec.worker};
  for (const WorkerdWorker& w : spec.services) workers.push_back(&w);
  const bool outbound = !spec.outbound.empty();
  std::vector<std::string> services, v8_flags;
  for (size_t i = 0; i < workers.size() && i < modules.size(); ++i) {
    const WorkerdWorker& w = *workers[i];
    services.push_back(fmt::format("(name = {}, worker = {})", CapnpQuote(w.service), Worker(w, modules[i], outbound)));
    for (size_t k = 0; k < w.kv.size(); ++k) {
      const KvNamespace& ns = w.kv[k];
      nlohmann::json entries = nlohmann::json::object();
      for (const auto& [key, value] : ns.entries) entries[key] = value;
      const std::string file = fmt::format("kv-{}-{}.json", i, k);
      out.files.emplace_back(file, entries.dump());
      services.push_back(fmt::format(
          "(name = {}, worker = (\n    modules = [ (name = \"heapprof-kv-store.js\", esModule = embed "
          "\"heapprof-kv-store.js\") ],\n    compatibilityDate = {},\n    bindings = [ (name = \"ENTRIES\", json = "
          "embed {}) ],\n  ))",
          CapnpQuote(KvService(w, ns)), CapnpQuote(kDefaultCompatibilityDate), CapnpQuote(file)));
    }
  }
  bool kv = false;
  for (const WorkerdWorker* w : workers) kv = kv || !w->kv.empty();
  if (kv) out.files.emplace_back("heapprof-kv-store.js", kWorkerdKvStore);
  if (outbound && modules.size() > workers.size()) {
    WorkerdWorker handler;
    handler.service = kOutboundService;
    services.push_back(fmt::format("(name = {}, worker = {})", CapnpQuote(kOutboundService),
                                   Worker(handler, modules[workers.size()], false)));
  }
  for (const std::string& f : spec.v8_flags) v8_flags.push_back(CapnpQuote(f));
  out.capnp = fmt::format(R"(# Written by heapprof run --runtime workerd.
using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [
  {}
  ],
  sockets = [ (name = "http", address = "127.0.0.1:{}", http = (style = proxy), service = {}) ],
  v8Flags = [ {} ],
);
)",
                          List(services, ",\n  "), http_port, CapnpQuote(spec.worker.service), List(v8_flags));
  return out;
}

}  // namespace heapprof::remote
