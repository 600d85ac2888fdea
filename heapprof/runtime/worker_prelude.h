// The JavaScript half of the worker runtime: the web globals a worker
// expects, from the prelude (heapprof/runtime/worker_prelude.js and its
// modules in heapprof/runtime/js/prelude/, bundled) and the maintained npm
// libraries bundled from heapprof/runtime/js/libraries.js (both embedded at build
// time by WorkerPrelude.cmake).
#pragma once

namespace heapprof::internal {

// A script whose completion value is { load }: load() runs the bundle at its
// first call and returns an object of Web API classes from npm packages
// (ReadableStream, WritableStream, TransformStream, ...) and
// makeDurableObjects, touching no globals.
extern const char kWorkerLibrariesSource[];

// The source map of kWorkerLibrariesSource (esbuild's, with every source
// named heapprof:runtime-libraries/PACKAGE/FILE by RuntimeLibrariesMap.cmake).
// heapprof/runtime/runtime_source_maps.h hands it out parsed.
extern const char kWorkerLibrariesSourceMap[];

// A script whose completion value is load(host) of
// heapprof/runtime/js/html_rewriter.js: html-rewriter-wasm's glue, which
// compiles lol-html's WebAssembly module when loaded. Run at a worker's first
// HTMLRewriter use only (natives.htmlRewriterEngine), and its source map,
// whose sources are named under the libraries' prefix.
extern const char kWorkerHtmlRewriterSource[];
extern const char kWorkerHtmlRewriterSourceMap[];

// A script whose completion value is load(host) of heapprof/runtime/js/node.js:
// the node: modules of nodejs_compat. Run at a worker's first import of one
// only (natives.nodeLibraries), and its source map (sources named under the
// libraries' prefix).
extern const char kWorkerNodeSource[];
extern const char kWorkerNodeSourceMap[];

// A script whose completion value is a function(natives, libraries, options) that
// installs the globals and hands the runtime's internals over with
// natives.setInternals: { makeRequest, makeContext(waits), makeFetchEvent,
// readResponse (through natives.respond), fetchListeners, runNextTimer, ... }.
// `natives` is MakeWorkerNatives()'s object, `libraries` the value of
// kWorkerLibrariesSource.
extern const char kWorkerPreludeSource[];
// The source map of kWorkerPreludeSource: its sources are the modules, named
// heapprof:runtime/MODULE (heapprof:runtime/headers.js) by PreludeMap.cmake.
extern const char kWorkerPreludeSourceMap[];

// The prelude's second script (heapprof/runtime/worker_apis.js): the Web APIs
// off the request path, run at their first use (natives.webApis). Its
// completion value is a function(require) answering the modules' loaders;
// its map names the modules as kWorkerPreludeSourceMap does.
extern const char kWorkerApisSource[];
extern const char kWorkerApisSourceMap[];

// The resource names the runtime's frames carry in stacks and profiles.
inline constexpr const char* kWorkerPreludeName = "heapprof:runtime";
inline constexpr const char* kWorkerLibrariesName = "heapprof:runtime-libraries";
inline constexpr const char* kWorkerHtmlRewriterName = "heapprof:runtime-html-rewriter";
inline constexpr const char* kWorkerNodeName = "heapprof:runtime-node";
inline constexpr const char* kWorkerApisName = "heapprof:runtime-apis";

}  // namespace heapprof::internal
