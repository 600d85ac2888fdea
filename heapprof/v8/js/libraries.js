// The maintained Web API implementations heapprof's worker runtime uses
// instead of writing its own: npm packages pinned in package.json beside this
// file, installed by tools/bootstrap.sh into .deps/js-runtime and bundled by
// esbuild at build time (heapprof/v8/WorkerPrelude.cmake). The bundle's
// completion value is this module's namespace, handed to the prelude's
// installer (worker_prelude.js) as `libraries`. Nothing here touches globals.

// WHATWG Streams, from the spec's reference implementation.
export {
  ReadableStream, ReadableStreamDefaultReader, ReadableStreamBYOBReader, ReadableStreamDefaultController,
  ReadableByteStreamController, ReadableStreamBYOBRequest, WritableStream, WritableStreamDefaultWriter,
  WritableStreamDefaultController, TransformStream, TransformStreamDefaultController,
  ByteLengthQueuingStrategy, CountQueuingStrategy,
} from 'web-streams-polyfill';

// URLPattern, from the WICG polyfill's side-effect-free entry point (it
// canonicalizes through the global URL).
export { URLPattern } from 'urlpattern-polyfill/urlpattern';

// HTMLRewriter's engine: lol-html (workerd's own HTML rewriter) compiled to
// WebAssembly with asyncify for async handlers. Nothing of it runs until the
// first call: then its glue compiles the module, whose bytes `host.wasmBytes()`
// gives (the prelude wraps the engine into workerd's HTMLRewriter API).
import htmlRewriterHost from './html_rewriter_host.js';
import htmlRewriterAsyncify from 'html-rewriter-wasm/dist/asyncify.js';
export function htmlRewriterEngine(host) {
  htmlRewriterHost.provide(host);
  // The glue asks for two modules by a tagged template, require(String.raw`...`),
  // which esbuild leaves to a global `require`: there is one only while the
  // glue's top level runs (an own one of the worker's is put back after).
  const modules = { './asyncify.js': htmlRewriterAsyncify, util: htmlRewriterHost };
  const before = Object.getOwnPropertyDescriptor(globalThis, 'require');
  Object.defineProperty(globalThis, 'require', {
    configurable: true, writable: true,
    value: name => {
      if (!Object.hasOwn(modules, name)) throw new Error('html-rewriter-wasm requires an unknown module ' + name);
      return modules[name];
    },
  });
  try {
    return require('html-rewriter-wasm');
  } finally {
    if (before === undefined) delete globalThis.require;
    else Object.defineProperty(globalThis, 'require', before);
  }
}
