// HTMLRewriter over lol-html (html-rewriter-wasm), loaded at its first use.

import { natives, webLibraries } from './host.js';
import { Response } from './response.js';
import { TextDecoder, TextEncoder } from './encoding.js';
import { viewBytes } from './bytes.js';

// ---- HTMLRewriter and the APIs this runtime lacks ----

// HTMLRewriter with workerd's API over lol-html, workerd's own rewriter,
// compiled to WebAssembly (html-rewriter-wasm). Its script and module are
// run and compiled at the first HTMLRewriter use in the isolate, not at
// start-up: a worker that never rewrites HTML pays nothing for them.
let rewriterEngine = null;
function htmlRewriterModule() {
  if (rewriterEngine === null) {
    const load = natives.htmlRewriterEngine();  // runs the engine's script (heapprof/runtime/js/html_rewriter.js)
    rewriterEngine = load({ wasmBytes: natives.htmlRewriterWasm, TextDecoder, TextEncoder });
  }
  return rewriterEngine;
}
// [name, function, receiver] of each handler `handlers` has, read when it is
// registered (as workerd does) and called with `handlers` as `this`.
function handlerFunctions(handlers, names) {
  if (handlers === null || typeof handlers !== 'object' && typeof handlers !== 'function') {
    throw new TypeError('HTMLRewriter handlers must be an object');
  }
  const functions = [];
  for (const name of names) {
    const handler = handlers[name];
    if (handler === undefined) continue;
    if (typeof handler !== 'function') throw new TypeError('HTMLRewriter handler ' + name + ' is not a function');
    functions.push([name, handler, handlers]);
  }
  return functions;
}
class HTMLRewriter {
  #handlers = [];  // [selector, handlerFunctions(...)], a null selector for onDocument
  on(selector, handlers) {
    selector = String(selector);
    // lol-html parses the selector here, as workerd does: a bad one throws from on().
    const probe = new (htmlRewriterModule().HTMLRewriter)(() => {});
    try { probe.on(selector, {}); } finally { probe.free(); }
    this.#handlers.push([selector, handlerFunctions(handlers, ['element', 'comments', 'text'])]);
    return this;
  }
  onDocument(handlers) {
    this.#handlers.push([null, handlerFunctions(handlers, ['doctype', 'comments', 'text', 'end'])]);
    return this;
  }
  // A Response like `response` whose body is `response`'s rewritten while it
  // is read: each chunk read from the source goes through lol-html (handlers,
  // async ones too, run then), and what lol-html has written is the next
  // chunk. An error of a handler or of the source errors the body.
  transform(response) {
    if (!(response instanceof Response)) {
      throw new TypeError("Failed to execute 'transform' on 'HTMLRewriter': parameter 1 is not of type 'Response'.");
    }
    const source = response.body;
    if (source === null) return new Response(null, response);
    const reader = source.getReader();
    const { HTMLRewriter: Engine } = htmlRewriterModule();
    let written = [];
    let rewriter = new Engine(chunk => written.push(chunk));
    const release = () => { if (rewriter !== null) { rewriter.free(); rewriter = null; } };
    // A rejected promise must not reach the engine: its asyncify glue would
    // leave the rewriter suspended mid-write, never to be freed. A rejection
    // is kept instead, the handlers after it are skipped, and the write
    // fails with it (a handler that throws at once fails the write itself).
    let failure = null;
    const guard = ([name, handler, receiver]) => [name, item => {
      if (failure !== null) return undefined;
      const result = handler.call(receiver, item);
      if (result === null || (typeof result !== 'object' && typeof result !== 'function') || typeof result.then !== 'function') return result;
      return Promise.resolve(result).then(() => {}, error => { if (failure === null) failure = { error }; });
    }];
    try {
      for (const [selector, functions] of this.#handlers) {
        const handlers = Object.fromEntries(functions.map(guard));
        if (selector === null) rewriter.onDocument(handlers);
        else rewriter.on(selector, handlers);
      }
    } catch (error) {
      release();
      throw error;
    }
    let ended = false;
    const { ReadableStream } = webLibraries();
    const body = new ReadableStream({
      async pull(controller) {
        try {
          while (written.length === 0 && !ended) {
            const { done, value } = await reader.read();
            if (done) {
              await rewriter.end();
              ended = true;
            } else {
              const bytes = viewBytes(value, 'a chunk of the body HTMLRewriter transforms');
              if (bytes.length > 0) await rewriter.write(bytes);
            }
            if (failure !== null) throw failure.error;
          }
        } catch (error) {
          // The error to report is the handler's or the source's, not one of
          // freeing an engine rewriter that the error left mid-write.
          try { release(); } catch { rewriter = null; }
          reader.cancel(error).catch(() => {});
          throw error;
        }
        const chunks = written;
        written = [];
        for (const chunk of chunks) controller.enqueue(chunk);
        if (ended) {
          release();
          controller.close();
        }
      },
      cancel(reason) {
        release();
        return reader.cancel(reason);
      },
    }, { highWaterMark: 0 });
    return new Response(body, response);
  }
}

export { HTMLRewriter };
