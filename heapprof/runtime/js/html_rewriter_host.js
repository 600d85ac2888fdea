// What html-rewriter-wasm's wasm-bindgen glue takes from Node (esbuild
// aliases its `fs`, `path` and `util` to this file; WorkerPrelude.cmake):
// the glue reads its .wasm with fs.readFileSync at its top level, which runs
// on its first require (html_rewriter.js's load), so the module is compiled
// only by a worker that uses HTMLRewriter. The bytes and the text codecs are
// the runtime's, handed over by the prelude through provide().
'use strict';
let host = null;
function need() {
  if (host === null) throw new Error('html-rewriter-wasm was loaded before the runtime provided its host');
  return host;
}
module.exports = {
  provide(value) { host = value; },
  // fs.readFileSync(path.join(__dirname, 'html_rewriter_bg.wasm')): the only file the glue reads.
  readFileSync() { return need().wasmBytes(); },
  join(...parts) { return parts.join('/'); },
  get TextDecoder() { return need().TextDecoder; },
  get TextEncoder() { return need().TextEncoder; },
};
