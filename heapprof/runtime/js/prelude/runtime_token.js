// The token of the classes only the runtime constructs.

// The runtime makes the one instance of the classes a worker can test with
// instanceof but never construct (Crypto, SubtleCrypto, Navigator, Cache...).
const runtimeToken = Symbol('runtime');
const illegalConstructor = token => { if (token !== runtimeToken) throw new TypeError('Illegal constructor'); };

export { runtimeToken, illegalConstructor };
