// What the host hands the prelude: its natives (worker_natives.cpp), the npm
// libraries' classes (heapprof/runtime/js/libraries.js) and the options.
// The bundle is the body of installWorkerGlobals(hostNatives, hostLibraries,
// hostOptions) (WorkerPrelude.cmake wraps it): these three names are its
// parameters, read here only, and every other module imports them from here.

const natives = hostNatives, libraries = hostLibraries, options = hostOptions;

const {
  consoleWrite, requestParts, ownStrings, base64Functions, jsonResponder, utf8Encode, utf8Decode, structuredClone: nativeClone,
  randomFill, digest: nativeDigest, hmac: nativeHmac, timingSafeEqual: nativeTimingSafeEqual, zlibOpen, zlibRun, zlibClose,
  keyInfo: nativeKeyInfo, keyFromJwk: nativeKeyFromJwk, keyToJwk: nativeKeyToJwk, ecFromRaw: nativeEcFromRaw, keyToDer: nativeKeyToDer,
  ecToRaw: nativeEcToRaw, generateKeyPair: nativeGenerateKeyPair, sign: nativeSign, verify: nativeVerify, rsaOaep,
  aes: nativeAes, pbkdf2: nativePbkdf2, hkdf: nativeHkdf, ecdh: nativeEcdh, getAsyncFrame, setAsyncFrame,
} = natives;
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
// A value made at its first use (a module's classes), then kept.
const once = make => { let value, made = false; return () => (made ? value : (value = make(), made = true, value)); };

export { consoleWrite, requestParts, ownStrings, base64Functions, jsonResponder, utf8Encode, utf8Decode, nativeClone,
  randomFill, nativeDigest, nativeHmac, nativeTimingSafeEqual, zlibOpen, zlibRun, zlibClose, nativeKeyInfo,
  nativeKeyFromJwk, nativeKeyToJwk, nativeEcFromRaw, nativeKeyToDer, nativeEcToRaw, nativeGenerateKeyPair, nativeSign,
  nativeVerify, rsaOaep, nativeAes, nativePbkdf2, nativeHkdf, nativeEcdh, getAsyncFrame, setAsyncFrame,
  isReadableStream, makeDurableObjects, webLibraries, libraryGlobals, once, natives, libraries, options };
