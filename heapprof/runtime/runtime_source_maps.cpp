#include "heapprof/runtime/runtime_source_maps.h"

#include "heapprof/runtime/worker_prelude.h"

namespace heapprof {

Result<const SourceMap*> RuntimeLibrariesSourceMap() {
  // Parsed once: every window's symbolization reuses it.
  static const Result<SourceMap> parsed = SourceMap::Parse(internal::kWorkerLibrariesSourceMap);
  if (!parsed.ok()) {
    return Error(ErrorCode::kInternal, "the runtime libraries' embedded source map: " + parsed.status().message());
  }
  return &parsed.value();
}

Result<const SourceMap*> RuntimePreludeSourceMap() {
  static const Result<SourceMap> parsed = SourceMap::Parse(internal::kWorkerPreludeSourceMap);
  if (!parsed.ok()) {
    return Error(ErrorCode::kInternal, "the runtime prelude's embedded source map: " + parsed.status().message());
  }
  return &parsed.value();
}

Result<const SourceMap*> RuntimeHtmlRewriterSourceMap() {
  static const Result<SourceMap> parsed = SourceMap::Parse(internal::kWorkerHtmlRewriterSourceMap);
  if (!parsed.ok()) {
    return Error(ErrorCode::kInternal, "the HTMLRewriter engine's embedded source map: " + parsed.status().message());
  }
  return &parsed.value();
}

Result<const SourceMap*> RuntimeNodeSourceMap() {
  static const Result<SourceMap> parsed = SourceMap::Parse(internal::kWorkerNodeSourceMap);
  if (!parsed.ok()) {
    return Error(ErrorCode::kInternal, "the node: modules' embedded source map: " + parsed.status().message());
  }
  return &parsed.value();
}

namespace {

// The prelude's second script's (worker_apis.js), whose sources are named as the prelude's.
Result<const SourceMap*> RuntimeApisSourceMap() {
  static const Result<SourceMap> parsed = SourceMap::Parse(internal::kWorkerApisSourceMap);
  if (!parsed.ok()) {
    return Error(ErrorCode::kInternal,
                 "the runtime prelude's Web APIs' embedded source map: " + parsed.status().message());
  }
  return &parsed.value();
}

}  // namespace

Result<const SourceMap*> RuntimeSourceMapProvider::MapFor(std::string_view script) {
  if (script == internal::kWorkerPreludeName) return RuntimePreludeSourceMap();
  if (script == internal::kWorkerLibrariesName) return RuntimeLibrariesSourceMap();
  if (script == internal::kWorkerHtmlRewriterName) return RuntimeHtmlRewriterSourceMap();
  if (script == internal::kWorkerNodeName) return RuntimeNodeSourceMap();
  if (script == internal::kWorkerApisName) return RuntimeApisSourceMap();
  if (others_ == nullptr) return static_cast<const SourceMap*>(nullptr);
  return others_->MapFor(script);
}

}  // namespace heapprof
