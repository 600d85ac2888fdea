// The JavaScript half of heapprof's worker runtime: the installer, which puts
// the Web APIs of heapprof/runtime/js/prelude/ (one module per API) on the
// global object and hands the runtime's internals to the host. esbuild
// bundles it with the modules of the request path into the body of the
// installer, a function of (natives, libraries, options) that the runtime
// compiles as one (WorkerPrelude.cmake, worker_runtime.cpp), with a source
// map that names each module:
// heapprof:runtime/headers.js; the other modules are a second script,
// worker_apis.js, run at the first use of one of its APIs.
//
// Where a real implementation exists in V8 or in a C library, these globals
// call it through `natives` (UTF-8, structured clone, OpenSSL for crypto);
// where a maintained npm implementation exists (streams), it comes in as
// `libraries` (heapprof/runtime/js/libraries.js, bundled at build time); what is
// written here follows the WHATWG/W3C specs' algorithms. What is not offered
// is absent (or refuses with a message), never faked. Everything the modules
// share stays inside the two scripts' closures (the second gets what it
// imports from the first through shareWithApis): a worker sees the globals alone.

import { ExecutionContext, addEventListener, fetchListeners, removeEventListener, reportError } from './js/prelude/context.js';
import { Headers, adoptHeaders, flattenHeaders, headerName, headerValue, makeHeadersImmutable } from './js/prelude/headers.js';
import { Request, cfFor, hostInit } from './js/prelude/request.js';
import { Response } from './js/prelude/response.js';
import {
  addTimer, beginObjectEvent, beginRequest, clearInterval, clearTimeout, endRequest, queueMicrotask, runNextTimer,
  setInterval, setTimeout, timerObjects, virtualNow,
} from './js/prelude/timers.js';
import { bytesStream, textStreams } from './js/prelude/streams.js';
import { copyBytes, nameNative, toArrayBuffer, viewBytes } from './js/prelude/bytes.js';
import { isNormalHref } from './js/prelude/href.js';
import { ownStringsOf } from './js/prelude/own_strings.js';
import { bodyContent } from './js/prelude/body.js';
import { cloudflareWorkersModule, currentWaits, entrypointFetch, setCurrentWaits, workersClasses } from './js/prelude/cloudflare_workers.js';
import { fetch, setFetchHandler } from './js/prelude/fetch.js';
import { cryptoGlobals } from './js/prelude/crypto/globals.js';
import {
  getAsyncFrame, lazyClasses, libraryGlobals, loadApi, makeDurableObjects, natives, once, options, requestParts, respond,
  setAsyncFrame, shareWithApis, utf8Decode, utf8Encode, webLibraries,
} from './js/prelude/host.js';
import { missingApi, missingClass, missingGlobals } from './js/prelude/missing.js';
import { illegalConstructor, runtimeToken } from './js/prelude/runtime_token.js';

// What the modules of worker_apis.js import from this script's modules, by
// the module's file name: a function called when an importing module first
// runs. tests/build/prelude_check.mjs checks that it names every import.
shareWithApis(path => {
  switch (path.slice(path.lastIndexOf('/') + 1)) {
    case 'host.js': return {
      getAsyncFrame, lazyClasses, loadApi, natives, once, options, setAsyncFrame, utf8Decode, utf8Encode, webLibraries,
    };
    case 'bytes.js': return { copyBytes, nameNative, toArrayBuffer, viewBytes };
    case 'timers.js': return { addTimer, clearTimeout, setTimeout, get virtualNow() { return virtualNow; } };
    case 'globals.js': return { cryptoGlobals };
    case 'streams.js': return { bytesStream };
    case 'request.js': return { Request };
    case 'response.js': return { Response };
    case 'runtime_token.js': return { illegalConstructor, runtimeToken };
    case 'missing.js': return { missingApi };
    case 'href.js': return { isNormalHref };
    case 'own_strings.js': return { ownStringsOf };
  }
  throw new Error('worker_apis.js imports ' + path + ', which the prelude does not share');
});

// The globals. What the request path needs (Headers, Request, Response,
// fetch, the listeners) is made now; every other API is a name in the
// isolate's lazy-globals table (natives.lazyGlobals, heapprof/v8/
// lazy_globals.h): the global object's interceptor answers for it, and its
// module runs at the name's first read (loadApi: most are in worker_apis.js,
// the prelude's second script), which makes the value a plain data
// property, writable, enumerable and configurable, as Object.assign would
// have made it. A worker that uses none of them carries none of their
// classes, and no property for their names.
// Every lazy global has the one make function, lazyGlobal, which the table
// calls with the name: a closure and a context per global or per module
// would each stay on the heap of a worker that reads none of them.
const lazyGlobal = name => {
  let exports;  // the module's (a new object of esbuild's getters at each loadApi)
  switch (name) {
    case 'URL': exports = loadApi('url.js'); break;
    case 'URLSearchParams': exports = loadApi('url_search_params.js'); break;
    case 'Blob': case 'File': exports = loadApi('blob.js'); break;
    case 'FormData': exports = loadApi('forms.js'); break;
    case 'TextEncoder': case 'TextDecoder': case 'atob': case 'btoa': case 'structuredClone':
      exports = loadApi('encoding.js'); break;
    case 'DOMException': exports = loadApi('dom_exception.js'); break;
    case 'navigator': case 'Navigator': exports = loadApi('navigator.js'); break;
    case 'scheduler': case 'performance': exports = timerObjects(); break;
    case 'console': exports = loadApi('console.js'); break;
    case 'IdentityTransformStream': case 'FixedLengthStream': exports = loadApi('workerd_streams.js'); break;
    case 'TextEncoderStream': case 'TextDecoderStream': exports = textStreams(); break;
    case 'CompressionStream': case 'DecompressionStream': exports = loadApi('compression.js'); break;
    case 'HTMLRewriter': exports = loadApi('html_rewriter.js'); break;
    case 'Cache': case 'CacheStorage': case 'caches': exports = loadApi('cache.js'); break;
    case 'crypto': case 'Crypto': case 'SubtleCrypto': case 'CryptoKey': exports = cryptoGlobals(); break;
    case 'Event': case 'CustomEvent': case 'ErrorEvent': case 'MessageEvent': case 'CloseEvent': case 'ExtendableEvent':
    case 'FetchEvent': case 'EventTarget': exports = loadApi('events.js'); break;
    case 'AbortController': case 'AbortSignal': exports = loadApi('abort.js'); break;
    default:
      if (!libraryGlobals.includes(name)) throw new Error('no lazy global is named ' + name);
      exports = webLibraries();
  }
  return exports[name];
};
// The eager globals are own properties; the lazy ones, the table's, are
// listed after them (Object.keys(globalThis)), in this order.
Object.assign(globalThis, {
  Headers, Request, Response,
  self: globalThis,
  origin: 'null',  // a worker's origin is opaque, as in workerd
  setTimeout, clearTimeout, setInterval, clearInterval, queueMicrotask,
  fetch, addEventListener, removeEventListener, reportError,
});
natives.lazyGlobals(missingGlobals, missingClass);
natives.lazyGlobals(['URL', 'URLSearchParams', 'Blob', 'File', 'FormData', 'TextEncoder', 'TextDecoder', 'atob', 'btoa',
  'structuredClone', 'DOMException', 'navigator', 'scheduler', 'Navigator', 'console', 'performance',
  'IdentityTransformStream', 'FixedLengthStream', ...libraryGlobals,
  'TextEncoderStream', 'TextDecoderStream', 'CompressionStream', 'DecompressionStream', 'HTMLRewriter',
  'Cache', 'CacheStorage', 'caches', 'crypto', 'Crypto', 'SubtleCrypto', 'CryptoKey', 'Event', 'CustomEvent',
  'ErrorEvent', 'MessageEvent', 'CloseEvent', 'ExtendableEvent', 'FetchEvent', 'EventTarget', 'AbortController',
  'AbortSignal'], lazyGlobal);
if (options.nodejsCompat) loadApi('node_compat.js').installNodeGlobals();
// Not in workerd, so a worker that relies on them would not run there.
delete globalThis.WeakRef;
delete globalThis.FinalizationRegistry;

// Made for a worker with Durable Object bindings only (makeEnv).
let durableObjectsRuntime = null;
const durableObjects = () => durableObjectsRuntime ??= makeDurableObjects({
  DurableObject: workersClasses().DurableObject, Request, Response, structuredClone: loadApi('encoding.js').structuredClone,
  hmac: natives.hmac, digest: natives.digest, randomFill: natives.randomFill, utf8Encode,
  defer: callback => addTimer(callback, 0, [], false), missingApi, objectCall: natives.objectCall,
  objectStorage: natives.objectStorage, serialize: natives.serialize, deserialize: natives.deserialize,
});

const internals = {
  subrequestFetch: fetch,
  setDurableObjectExports: (exports, env) => durableObjects().setExports(exports, env),
  // In a Durable Object's isolate: one event of a stub's call (durable_object_host.h).
  durableObjectEvent(ns, id, name, payload) {
    beginObjectEvent();
    return durableObjects().serve(ns, id, name, payload);
  },
  setFetchHandler,
  // The env of fetch(request, env, ctx): vars given as JSON texts, KV
  // namespaces as [binding, [key, value, ...]] pairs, Durable Object
  // namespaces as [binding, class, unique key, sqlite] (js/durable_objects.js).
  makeEnv(varNames, varJson, kvBindings, kvEntries, objectBindings) {
    const env = {};
    for (const [binding, className, key, sqlite] of objectBindings) env[binding] = durableObjects().makeNamespace(binding, className, key, sqlite);
    for (let i = 0; i < varNames.length; i++) env[varNames[i]] = JSON.parse(varJson[i]);
    for (let i = 0; i < kvBindings.length; i++) env[kvBindings[i]] = new (loadApi('kv.js').KVNamespace)(kvEntries[i]);
    if (options.populateProcessEnv) {
      const { processEnv } = loadApi('node_compat.js');
      for (const name of varNames) if (typeof env[name] === 'string') processEnv[name] = env[name];
    }
    return env;
  },
  // The node: modules are worker_apis.js's (node_compat.js), as nodejs_compat's globals.
  nodeModule: specifier => loadApi('node_compat.js').nodeModuleFor(specifier),
  cloudflareWorkersModule,
  entrypointFetch,
  fetchListeners,
  runNextTimer,
  // Around each request the host serves: the request's timers end with it (timers.js).
  beginRequest,
  endRequest,
  // The Request of the request the host is dispatching (natives.requestParts).
  // Every request pays for what is made here, while workerd makes it in C++
  // off the V8 heap: the header list from requestParts becomes the Headers'
  // own list (checked in place), and hostInit is reused.
  makeRequest() {
    // Sets hostInit's method, url and body (a body that arrives over HTTP has
    // the type its sender gave it, or none).
    const list = requestParts(hostInit);
    for (let i = 0; i < list.length; i += 2) {
      list[i] = headerName(list[i]);
      list[i + 1] = headerValue(list[i + 1]);
    }
    const headers = adoptHeaders(list);
    hostInit.headers = headers;
    hostInit.cf = cfFor(headers.get('cf-ipcountry'));
    let request;
    try {
      // redirect: 'manual', as on a request the platform hands a worker.
      request = new Request(hostInit.url, hostInit);
    } finally {
      hostInit.headers = hostInit.body = hostInit.url = null;
    }
    makeHeadersImmutable(headers);  // new Request(request) gives a mutable copy, as in workerd
    return request;
  },
  // Hands the host what a handler returned (natives.respond: status,
  // statusText, [name, value, ...], body as a string or Uint8Array); a
  // promise when the body is a stream (none on the common path). No array of
  // the parts is made.
  readResponse(response) {
    if (!(response instanceof Response)) {
      throw new TypeError('the fetch handler returned ' +
        (response === null ? 'null' : typeof response === 'object' ? 'an object that is not a Response' : typeof response) +
        ' instead of a Response');
    }
    const status = response.status, statusText = response.statusText, headers = flattenHeaders(response.headers);
    const body = bodyContent(response);
    if (body instanceof Promise) return body.then(bytes => respond(status, statusText, headers, bytes));
    respond(status, statusText, headers, body === null ? '' : body);
  },
  // ctx for fetch(request, env, ctx); the host then takes the array its
  // waitUntil promises go into (currentWaits), made here under a runtime frame.
  makeContext() {
    const waits = [];
    setCurrentWaits(waits);
    return new ExecutionContext(waits);
  },
  currentWaits: () => currentWaits,
  // A FetchEvent for service-worker style scripts; state.response is set by respondWith.
  makeFetchEvent(request, ctx) {
    const state = { response: undefined, responded: false };
    return [new (loadApi('events.js').FetchEvent)(runtimeToken, request, ctx, state), state];
  },
};
// Handed to the host (natives.setInternals) rather than exported: the bundle
// is the installer's body itself (esbuild's ESM output, no module wrapper),
// so its top-level names are the installer's own, with none of esbuild's
// export helpers among them.
natives.setInternals(internals);
