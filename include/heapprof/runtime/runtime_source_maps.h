// Source maps for the worker runtime's own JavaScript: the prelude's modules
// (one script, heapprof:runtime, named heapprof:runtime/MODULE once mapped),
// and the npm libraries it
// bundles (web-streams-polyfill, urlpattern-polyfill) run as one generated
// script, heapprof:runtime-libraries, whose source map is embedded at build
// time. Mapped, their frames name the package file they come from
// (heapprof:runtime-libraries/urlpattern-polyfill/dist/urlpattern.js) at its
// own line and column, instead of a line of a bundle nobody can open.
#pragma once

#include <optional>
#include <string_view>

#include "heapprof/core/source_map.h"
#include "heapprof/core/source_map_locator.h"
#include "heapprof/core/status.h"

namespace heapprof {

// The embedded map of the libraries bundle, parsed on first use and kept for
// the process's life (thread-safe). An error only if the build embedded a
// broken map.
Result<const SourceMap*> RuntimeLibrariesSourceMap();
// Likewise for the prelude (heapprof:runtime), bundled from one module per
// Web API: its frames name the module (heapprof:runtime/headers.js).
Result<const SourceMap*> RuntimePreludeSourceMap();
// Likewise for HTMLRewriter's engine (heapprof:runtime-html-rewriter), a
// script of its own run at a worker's first HTMLRewriter use; its sources are
// named under the same heapprof:runtime-libraries/ prefix.
Result<const SourceMap*> RuntimeHtmlRewriterSourceMap();
// Likewise for the node: modules of nodejs_compat (heapprof:runtime-node),
// run at a worker's first import of one.
Result<const SourceMap*> RuntimeNodeSourceMap();

// Answers the runtime's library scripts from their embedded maps and every
// other script from `others` (no map when null). Wrap the worker's own
// provider in it wherever a WorkerRuntime's profile or stacks are symbolized.
class RuntimeSourceMapProvider final : public SourceMapProvider {
 public:
  explicit RuntimeSourceMapProvider(SourceMapProvider* others = nullptr) : others_(others) {}
  Result<const SourceMap*> MapFor(std::string_view script) override;
  std::optional<double> MapOlderThanScript(std::string_view script) override {
    return others_ != nullptr ? others_->MapOlderThanScript(script) : std::nullopt;
  }

 private:
  SourceMapProvider* others_;
};

}  // namespace heapprof
