// The Cache API (caches), in memory.

import { Request } from './request.js';
import { Response } from './response.js';
import { URL } from './url.js';
import { illegalConstructor, runtimeToken } from './runtime_token.js';

// The Cache API, in memory for this isolate: put() stores a copy, match()
// returns a copy. Honest about what it is: nothing leaves the isolate.
class Cache {
  #entries = new Map();
  constructor(token) { illegalConstructor(token); }
  #key(request) { return request instanceof Request ? request.url : new URL(String(request)).href; }
  async match(request) {
    const entry = this.#entries.get(this.#key(request));
    return entry === undefined ? undefined : entry.clone();
  }
  async put(request, response) {
    if (!(response instanceof Response)) throw new TypeError('Cache.put needs a Response');
    this.#entries.set(this.#key(request), response.clone());
  }
  async delete(request) { return this.#entries.delete(this.#key(request)); }
}
// What workerd's caches do not implement, refused with workerd's words (a
// throw, not a rejected promise, as there).
const notImplemented = (on, method) => function () {
  throw new Error(`Failed to execute '${method}' on '${on}': the method is not implemented.`);
};
for (const method of ['add', 'addAll', 'keys', 'matchAll']) {
  Object.defineProperty(Cache.prototype, method, { value: notImplemented('Cache', method), writable: true, configurable: true });
}
class CacheStorage {
  #named = new Map();
  default = new Cache(runtimeToken);
  constructor(token) { illegalConstructor(token); }
  async open(name) {
    if (!this.#named.has(name)) this.#named.set(name, new Cache(runtimeToken));
    return this.#named.get(name);
  }
}
for (const method of ['delete', 'has', 'keys', 'match']) {
  Object.defineProperty(CacheStorage.prototype, method, { value: notImplemented('CacheStorage', method), writable: true, configurable: true });
}
const caches = new CacheStorage(runtimeToken);

export { Cache, CacheStorage, caches };
