// The JavaScript half of heapprof's worker runtime: the installer, which puts
// the Web APIs of heapprof/runtime/js/prelude/ (one module per API) on the
// global object and returns the runtime's internals to the host. esbuild
// bundles it with its modules into one script whose completion value is
// installWorkerGlobals(natives, libraries, options) (WorkerPrelude.cmake),
// with a source map that names each module: heapprof:runtime/headers.js.
//
// Where a real implementation exists in V8 or in a C library, these globals
// call it through `natives` (UTF-8, structured clone, OpenSSL for crypto);
// where a maintained npm implementation exists (streams), it comes in as
// `libraries` (heapprof/runtime/js/libraries.js, bundled at build time); what is
// written here follows the WHATWG/W3C specs' algorithms. What is not offered
// is absent (or refuses with a message), never faked. Everything the modules
// share stays inside the bundle's closure: a worker sees the globals alone.

// own_strings.js exports nothing: it wraps getters of URL, Request and Headers.
import './js/prelude/own_strings.js';
import { Blob, File } from './js/prelude/blob.js';
import { cryptoGlobals } from './js/prelude/crypto/globals.js';
import { DOMException } from './js/prelude/dom_exception.js';
import { ExecutionContext, addEventListener, fetchListeners, removeEventListener, reportError } from './js/prelude/context.js';
import { FixedLengthStream, IdentityTransformStream } from './js/prelude/workerd_streams.js';
import { FormData } from './js/prelude/forms.js';
import { Headers, adoptHeaders, flattenHeaders, headerName, headerValue, makeHeadersImmutable } from './js/prelude/headers.js';
import { Navigator } from './js/prelude/navigator.js';
import { Request, cfFor, hostInit } from './js/prelude/request.js';
import { Response } from './js/prelude/response.js';
import { Scheduler, addTimer, clearInterval, clearTimeout, performance, queueMicrotask, runNextTimer, setInterval, setTimeout } from './js/prelude/timers.js';
import { TextDecoder, TextEncoder, atob, btoa, structuredClone } from './js/prelude/encoding.js';
import { textStreams } from './js/prelude/streams.js';
import { URL } from './js/prelude/url.js';
import { URLSearchParams } from './js/prelude/url_search_params.js';
import { bodyContent } from './js/prelude/body.js';
import { DurableObject, cloudflareWorkersModule, entrypointFetch, setCurrentWaits } from './js/prelude/cloudflare_workers.js';
import { console } from './js/prelude/console.js';
import { fetch, setFetchHandler } from './js/prelude/fetch.js';
import { installNodeGlobals, nodeModuleFor, processEnv } from './js/prelude/node_compat.js';
import {
  libraryGlobals, makeDurableObjects, nativeDigest, nativeHmac, natives, once, options, randomFill, requestParts,
  utf8Encode, webLibraries,
} from './js/prelude/host.js';
import { missingApi, missingGlobals } from './js/prelude/missing.js';
import { runtimeToken } from './js/prelude/runtime_token.js';

Object.assign(globalThis, {
  ...missingGlobals,
  Headers, Request, Response, URL, URLSearchParams, Blob, File, FormData,
  TextEncoder, TextDecoder, atob, btoa, structuredClone,
  DOMException,
  navigator: new Navigator(runtimeToken), scheduler: new Scheduler(runtimeToken),
  Navigator, self: globalThis,
  origin: 'null',  // a worker's origin is opaque, as in workerd
  console, performance, setTimeout, clearTimeout, setInterval, clearInterval, queueMicrotask,
  fetch, addEventListener, removeEventListener, reportError, IdentityTransformStream, FixedLengthStream,
});
// Built at their first use, and then plain data properties like the rest:
// the streams library and URLPattern (libraries.js), the classes over them,
// and the APIs whose modules nothing else imports, loaded by require()
// (esbuild's lazy initialiser of a module): a worker that uses none of them
// carries none of their classes.
const lazyGlobals = (load, names) => {
  for (const name of names) natives.lazyProperty(globalThis, name, () => load()[name], true);
};
const compressionApi = once(() => require('./js/prelude/compression.js'));
const rewriterApi = once(() => require('./js/prelude/html_rewriter.js'));
const cacheApi = once(() => require('./js/prelude/cache.js'));
const kvApi = once(() => require('./js/prelude/kv.js'));
const eventsApi = once(() => require('./js/prelude/events.js'));
const abortApi = once(() => require('./js/prelude/abort.js'));
lazyGlobals(webLibraries, libraryGlobals);
lazyGlobals(textStreams, ['TextEncoderStream', 'TextDecoderStream']);
lazyGlobals(compressionApi, ['CompressionStream', 'DecompressionStream']);
lazyGlobals(rewriterApi, ['HTMLRewriter']);
lazyGlobals(cacheApi, ['Cache', 'CacheStorage', 'caches']);
lazyGlobals(cryptoGlobals, ['crypto', 'Crypto', 'SubtleCrypto', 'CryptoKey']);
lazyGlobals(eventsApi, ['Event', 'CustomEvent', 'ErrorEvent', 'MessageEvent', 'CloseEvent', 'ExtendableEvent', 'FetchEvent', 'EventTarget']);
lazyGlobals(abortApi, ['AbortController', 'AbortSignal']);
if (options.nodejsCompat) installNodeGlobals();
// Not in workerd, so a worker that relies on them would not run there.
delete globalThis.WeakRef;
delete globalThis.FinalizationRegistry;

// Made for a worker with Durable Object bindings only (makeEnv).
let durableObjectsRuntime = null;
const durableObjects = () => durableObjectsRuntime ??= makeDurableObjects({
  DurableObject, Request, Response, structuredClone, hmac: nativeHmac, digest: nativeDigest, randomFill, utf8Encode,
  defer: callback => addTimer(callback, 0, [], false), missingApi, objectCall: natives.objectCall,
  objectStorage: natives.objectStorage, serialize: natives.serialize, deserialize: natives.deserialize,
});

export const internals = {
  subrequestFetch: fetch,
  setDurableObjectExports: (exports, env) => durableObjects().setExports(exports, env),
  // In a Durable Object's isolate: one event of a stub's call (durable_object_host.h).
  durableObjectEvent: (ns, id, name, payload) => durableObjects().serve(ns, id, name, payload),
  setFetchHandler,
  // The env of fetch(request, env, ctx): vars given as JSON texts, KV
  // namespaces as [binding, [key, value, ...]] pairs, Durable Object
  // namespaces as [binding, class, unique key, sqlite] (js/durable_objects.js).
  makeEnv(varNames, varJson, kvBindings, kvEntries, objectBindings) {
    const env = {};
    for (const [binding, className, key, sqlite] of objectBindings) env[binding] = durableObjects().makeNamespace(binding, className, key, sqlite);
    for (let i = 0; i < varNames.length; i++) env[varNames[i]] = JSON.parse(varJson[i]);
    for (let i = 0; i < kvBindings.length; i++) env[kvBindings[i]] = new (kvApi().KVNamespace)(kvEntries[i]);
    if (options.populateProcessEnv) {
      for (const name of varNames) if (typeof env[name] === 'string') processEnv[name] = env[name];
    }
    return env;
  },
  nodeModule: nodeModuleFor,
  cloudflareWorkersModule,
  entrypointFetch,
  fetchListeners,
  runNextTimer,
  // The Request of the request the host is dispatching (natives.requestParts).
  // Every request pays for what is made here, while workerd makes it in C++
  // off the V8 heap: the header list from requestParts becomes the Headers'
  // own list (checked in place), and hostInit is reused.
  makeRequest() {
    const parts = requestParts();
    const list = parts[2];
    for (let i = 0; i < list.length; i += 2) {
      list[i] = headerName(list[i]);
      list[i + 1] = headerValue(list[i + 1]);
    }
    const headers = adoptHeaders(list);
    hostInit.method = parts[0];
    hostInit.headers = headers;
    // A body that arrives over HTTP has the type its sender gave it, or none.
    hostInit.body = parts[3] === '' ? null : parts[3];
    hostInit.cf = cfFor(headers.get('cf-ipcountry'));
    let request;
    try {
      // redirect: 'manual', as on a request the platform hands a worker.
      request = new Request(parts[1], hostInit);
    } finally {
      hostInit.headers = hostInit.body = null;
    }
    makeHeadersImmutable(headers);  // new Request(request) gives a mutable copy, as in workerd
    return request;
  },
  // [status, statusText, [name, value, ...], body (string or Uint8Array)] of
  // what a handler returned, for the host; a promise of it when the body is a
  // stream (no promise on the common path).
  readResponse(response) {
    if (!(response instanceof Response)) {
      throw new TypeError('the fetch handler returned ' +
        (response === null ? 'null' : typeof response === 'object' ? 'an object that is not a Response' : typeof response) +
        ' instead of a Response');
    }
    const parts = [response.status, response.statusText, flattenHeaders(response.headers), ''];
    const body = bodyContent(response);
    if (body instanceof Promise) return body.then(bytes => { parts[3] = bytes; return parts; });
    if (body !== null) parts[3] = body;
    return parts;
  },
  // ctx for fetch(request, env, ctx); the array collects waitUntil promises.
  makeContext() {
    const waits = [];
    setCurrentWaits(waits);
    return [new ExecutionContext(waits), waits];
  },
  // A FetchEvent for service-worker style scripts; state.response is set by respondWith.
  makeFetchEvent(request, ctx) {
    const state = { response: undefined, responded: false };
    return [new (eventsApi().FetchEvent)(runtimeToken, request, ctx, state), state];
  },
};
