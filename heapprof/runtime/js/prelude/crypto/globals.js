// Web Crypto's globals (crypto, Crypto, SubtleCrypto, CryptoKey), built at
// their first use: the crypto modules are loaded by require(), which esbuild
// turns into a call of the modules' lazy initialiser, so a worker that never
// touches crypto carries none of their classes.

import { loadApi, natives, once } from '../host.js';

const cryptoGlobals = once(() => {
  const { Crypto, SubtleCrypto, crypto, CryptoKey } = loadApi('crypto/subtle.js');
  natives.lazyProperty(Crypto.prototype, 'DigestStream', () => loadApi('workerd_streams.js').digestStream(), false);
  return { Crypto, SubtleCrypto, crypto, CryptoKey };
});

export { cryptoGlobals };
