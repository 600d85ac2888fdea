// KV namespace bindings, in memory.

import { copyBytes, toArrayBuffer } from './bytes.js';
import { structuredClone } from './encoding.js';
import { utf8Decode, utf8Encode } from './host.js';

// A KV namespace binding, in memory for this isolate (values are strings or
// bytes; expiration and consistency are not modelled).
class KVNamespace {
  #map = new Map();  // key -> { value: string | Uint8Array, metadata }
  constructor(entries) { for (let i = 0; i < entries.length; i += 2) this.#map.set(entries[i], { value: entries[i + 1], metadata: null }); }
  static #type(options) { return (typeof options === 'string' ? options : options && options.type) || 'text'; }
  static #decode(value, type) {
    switch (type) {
      case 'text': return typeof value === 'string' ? value : utf8Decode(value);
      case 'json': return JSON.parse(typeof value === 'string' ? value : utf8Decode(value));
      case 'arrayBuffer': return toArrayBuffer(typeof value === 'string' ? utf8Encode(value) : value);
      default: throw new TypeError('heapprof\'s KV supports the types text, json and arrayBuffer, not ' + type);
    }
  }
  // get() and getWithMetadata() of a list of keys: a Map of each key to its
  // value (or { value, metadata }), null for a missing key's value, as
  // workerd's KV answers; text and json only, at most 100 keys.
  #many(keys, options, withMetadata) {
    const type = KVNamespace.#type(options);
    if (type !== 'text' && type !== 'json') throw new TypeError(`KV get() of a list of keys takes the type "text" or "json", not "${type}"`);
    if (keys.length > 100) throw new RangeError('KV get() takes at most 100 keys at once');
    const out = new Map();
    for (const key of keys) {
      const entry = this.#map.get(String(key));
      const value = entry === undefined ? null : KVNamespace.#decode(entry.value, type);
      out.set(String(key), withMetadata ? { value, metadata: entry === undefined ? null : entry.metadata } : value);
    }
    return out;
  }
  async get(key, options) {
    if (Array.isArray(key)) return this.#many(key, options, false);
    const entry = this.#map.get(String(key));
    return entry === undefined ? null : KVNamespace.#decode(entry.value, KVNamespace.#type(options));
  }
  async getWithMetadata(key, options) {
    if (Array.isArray(key)) return this.#many(key, options, true);
    const entry = this.#map.get(String(key));
    if (entry === undefined) return { value: null, metadata: null };
    return { value: KVNamespace.#decode(entry.value, KVNamespace.#type(options)), metadata: entry.metadata };
  }
  async put(key, value, options = {}) {
    const stored = typeof value === 'string' ? value : copyBytes(value);
    if (stored === null) throw new TypeError('KV put() takes a string, an ArrayBuffer or an ArrayBufferView');
    this.#map.set(String(key), { value: stored, metadata: options.metadata === undefined ? null : structuredClone(options.metadata) });
  }
  async delete(key) { this.#map.delete(String(key)); }
  async list(options = {}) {
    const prefix = options.prefix == null ? '' : String(options.prefix);
    const limit = Math.min(1000, Math.max(1, Number(options.limit) || 1000));
    const names = [...this.#map.keys()].filter(k => k.startsWith(prefix)).sort();
    const start = options.cursor ? Number(options.cursor) || 0 : 0;
    const page = names.slice(start, start + limit);
    const complete = start + limit >= names.length;
    const keys = page.map(name => {
      const metadata = this.#map.get(name).metadata;
      return metadata === null ? { name } : { name, metadata };
    });
    return complete ? { keys, list_complete: true, cacheStatus: null } : { keys, list_complete: false, cursor: String(start + limit), cacheStatus: null };
  }
}

export { KVNamespace };
