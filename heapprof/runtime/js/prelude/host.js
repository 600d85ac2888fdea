// What the host hands the prelude: its natives (worker_natives.cpp), the npm
// libraries' classes (heapprof/runtime/js/libraries.js) and the options.
// The bundle is the body of installWorkerGlobals(hostNatives, hostLibraries,
// hostOptions) (WorkerPrelude.cmake wraps it): these three names are its
// parameters, read here only, and every other module imports them from here.

const natives = hostNatives, libraries = hostLibraries, options = hostOptions;

// The natives of the request path; a module loaded at its first use reads
// its own from `natives` when it runs (each native is made at its first
// read: MakeWorkerNatives).
const { requestParts, respond, ownStrings, jsonResponder, utf8Encode, utf8Decode, getAsyncFrame, setAsyncFrame } = natives;
// The npm libraries and Durable Objects (libraries.js, js/durable_objects.js)
// are compiled and run at their first use (libraries.load()): a worker that
// makes no stream, URLPattern or Durable Object does not carry their code.
let loaded = null;
const webLibraries = () => loaded ??= libraries.load();
const makeDurableObjects = (...args) => webLibraries().makeDurableObjects(...args);
// What libraries.js offers as globals (every export but makeDurableObjects).
const libraryGlobals = [
  'ReadableStream', 'ReadableStreamDefaultReader', 'ReadableStreamBYOBReader', 'ReadableStreamDefaultController',
  'ReadableByteStreamController', 'ReadableStreamBYOBRequest', 'WritableStream', 'WritableStreamDefaultWriter',
  'WritableStreamDefaultController', 'TransformStream', 'TransformStreamDefaultController',
  'ByteLengthQueuingStrategy', 'CountQueuingStrategy', 'URLPattern',
];
// No stream exists before the library is loaded.
const isReadableStream = value => loaded !== null && value instanceof loaded.ReadableStream;
// The classes a body may be made from whose modules load at their first use
// (blob.js, forms.js and url_search_params.js set theirs when they run): null
// until then, when no value can be an instance.
const lazyClasses = { URLSearchParams: null, Blob: null, FormData: null };
// The Web APIs nothing on the request path uses (worker_apis.js: URL, Blob,
// crypto, the events...) are a script of their own, compiled and run at the
// first loadApi() (natives.webApis): until then V8 has no function, scope or
// string of theirs. Each of its modules runs at its own first load; what they
// import from this bundle's modules comes through shared (shareWithApis).
let apis = null;
let shared = null;
const shareWithApis = share => { shared = share; };
const loadApi = path => (apis ??= natives.webApis()(shared))[path]();
// A value made at its first use (a module's classes), then kept.
const once = make => { let value, made = false; return () => (made ? value : (value = make(), made = true, value)); };

export { requestParts, respond, ownStrings, jsonResponder, utf8Encode, utf8Decode, getAsyncFrame, setAsyncFrame, isReadableStream,
  lazyClasses, loadApi, shareWithApis, makeDurableObjects, webLibraries, libraryGlobals, once, natives, libraries, options };
