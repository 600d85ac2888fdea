// The maintained Web API implementations heapprof's worker runtime uses
// instead of writing its own: npm packages pinned in package.json beside this
// file, installed by tools/bootstrap.sh into .deps/js-runtime and bundled by
// esbuild at build time (heapprof/runtime/WorkerPrelude.cmake). The bundle's
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

// Durable Objects (heapprof's own, not an npm package): the prelude wires
// env's namespaces and the worker's classes to it and keeps it off the globals.
export { makeDurableObjects } from './durable_objects.js';
