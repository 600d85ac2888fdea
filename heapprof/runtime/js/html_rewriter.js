// HTMLRewriter's engine: lol-html (workerd's own HTML rewriter) compiled to
// WebAssembly with asyncify for async handlers (html-rewriter-wasm, pinned in
// package.json beside this file). Bundled by esbuild apart from libraries.js
// (WorkerPrelude.cmake) and run only at a worker's first HTMLRewriter use
// (natives.htmlRewriterEngine), so that a worker that never rewrites HTML
// carries neither this script nor the module. The bundle's completion value
// is load(host), which answers html-rewriter-wasm's exports; its glue
// compiles the module, whose bytes `host.wasmBytes()` gives, as it loads.
import htmlRewriterHost from './html_rewriter_host.js';
import htmlRewriterAsyncify from 'html-rewriter-wasm/dist/asyncify.js';

export function load(host) {
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
