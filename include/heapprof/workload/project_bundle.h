// A Workers project's code as a deploy uploads it. A project's `main` is
// source (TypeScript, bare npm imports, node:* imports, text and wasm
// modules); what runs is the bundle the project's own wrangler writes with
// `deploy --dry-run --outdir`, or, when the project has no wrangler that a
// Node on hand can run, heapprof's esbuild with wrangler's settings. The
// bundle is kept in a cache keyed by the content of its inputs. V8-free.
#pragma once

#include <string>
#include <vector>

#include "heapprof/core/status.h"
#include "heapprof/workload/worker_config.h"

namespace heapprof {

// How a project was bundled.
enum class Bundler { kNone, kWrangler, kEsbuild };

struct ProjectBundle {
  Bundler bundler = Bundler::kNone;   // kNone: main runs as it stands (a bundle already, or no_bundle)
  std::string dir;                    // the bundle's folder ("" for kNone)
  std::string main;                   // the entry module to run (config.main for kNone)
  std::vector<BundleModule> modules;  // every module of the bundle, the entry first ({} for kNone)
  // One line saying which path was taken ("src/index.ts bundled by the
  // project's wrangler 4.168.0 (deploy --dry-run), cached"), "" for kNone.
  std::string summary;
  std::vector<std::string> notes;  // e.g. why the project's wrangler was not used
};

struct BundleOptions {
  std::string cache_dir;  // "" = $HEAPPROF_CACHE_DIR, else $XDG_CACHE_HOME or ~/.cache, + /heapprof/bundles
  // Node executables that may run the project's wrangler, in the order tried
  // ({} = `node` on $PATH, then heapprof's own Node 26 from its set-up).
  std::vector<std::string> nodes;
  std::string esbuild;  // heapprof's esbuild ("" = the one heapprof's set-up installed)
  // kWrangler: the project's wrangler or an error; kEsbuild: heapprof's
  // esbuild even when the project has wrangler; kNone: either, wrangler first.
  Bundler only = Bundler::kNone;
};

// The configuration keys each bundler honours (the rest are named in the
// warning line): wrangler reads its own config; heapprof's esbuild applies these.
inline const std::vector<std::string> kWranglerBuildKeys = {"define",
                                                            "alias",
                                                            "build",
                                                            "rules",
                                                            "find_additional_modules",
                                                            "base_dir",
                                                            "no_bundle",
                                                            "minify",
                                                            "keep_names",
                                                            "node_compat",
                                                            "tsconfig",
                                                            "jsx_factory",
                                                            "jsx_fragment",
                                                            "upload_source_maps",
                                                            "preserve_file_names"};
// (A project's own `rules` are not among them: esbuild types files by wrangler's defaults.)
inline const std::vector<std::string> kEsbuildBuildKeys = {"define",     "alias",    "no_bundle",         "minify",
                                                           "keep_names", "tsconfig", "upload_source_maps"};

// Whether the configuration's main must be bundled before it runs: main is
// TypeScript or JSX, or the worker was given as its project (folder or
// config) and the project has wrangler in node_modules or main imports a
// bare npm specifier; never with no_bundle = true.
bool NeedsBundle(const WorkerConfig& config);

// The bundle of the project `config` was read from (`env`: its --env), made
// or taken from the cache. Errors: the bundler's first lines of its message.
Result<ProjectBundle> BundleProject(const WorkerConfig& config, const std::string& env,
                                    const BundleOptions& options = {});

// The module type wrangler gives a file of the bundle by its name: the
// configuration's rules first, then wrangler's defaults (.txt .html .sql Text,
// .bin Data, .wasm CompiledWasm, .cjs CommonJS, .js .mjs ESModule).
ModuleType ModuleTypeOf(const WorkerConfig& config, const std::string& name);
// The type by wrangler's defaults alone (the file's extension).
ModuleType DefaultModuleType(const std::string& name);

}  // namespace heapprof
