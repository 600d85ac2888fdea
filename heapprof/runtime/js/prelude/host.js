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
const { makeDurableObjects, ...webLibraries } = libraries;  // Durable Objects: js/durable_objects.js
const { ReadableStream, WritableStream, TransformStream } = webLibraries;

export { consoleWrite, requestParts, ownStrings, base64Functions, jsonResponder, utf8Encode, utf8Decode, nativeClone,
  randomFill, nativeDigest, nativeHmac, nativeTimingSafeEqual, zlibOpen, zlibRun, zlibClose, nativeKeyInfo,
  nativeKeyFromJwk, nativeKeyToJwk, nativeEcFromRaw, nativeKeyToDer, nativeEcToRaw, nativeGenerateKeyPair, nativeSign,
  nativeVerify, rsaOaep, nativeAes, nativePbkdf2, nativeHkdf, nativeEcdh, getAsyncFrame, setAsyncFrame,
  ReadableStream, WritableStream, TransformStream, makeDurableObjects, webLibraries, natives, libraries, options };
