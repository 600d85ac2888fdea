// The storage of a Durable Object (ctx.storage) in heapprof's embedded
// runtime: get/put/delete/list/deleteAll/transaction over the host's entries
// of the object its isolate serves (heapprof/runtime/durable_object_host.h:
// serialized values, outside the isolate, so they outlive it), each
// operation holding the object's input gate until a later macrotask.
// Part of js/durable_objects.js (makeDurableObjects hands it what it needs).

const textKey = key => String(key);

// Storage keys sort as workerd's do: by their UTF-8 bytes, which is code point order.
function compareKeys(a, b) {
  if (a === b) return 0;
  const ia = a[Symbol.iterator](), ib = b[Symbol.iterator]();
  for (;;) {
    const x = ia.next(), y = ib.next();
    if (x.done) return y.done ? 0 : -1;
    if (y.done) return 1;
    const cx = x.value.codePointAt(0), cy = y.value.codePointAt(0);
    if (cx !== cy) return cx < cy ? -1 : 1;
  }
}

export function makeStorage({ token, illegal, serialize, deserialize, objectStorage, missingApi }) {
  // ---- storage (the host's, outside this isolate; values serialized in and out) ----

  // The object's entries (key -> serialized value) in the host, and a
  // transaction's working copy of them in this isolate; keys() in key order.
  const hostEntries = {
    get: key => objectStorage('get', key),
    set: (key, bytes) => { objectStorage('put', key, bytes); },
    delete: key => objectStorage('delete', key),
    keys: () => objectStorage('keys'),
    clear: () => { objectStorage('clear'); },
  };
  class WorkingEntries {
    #map = new Map();
    constructor(from) { for (const key of from.keys()) this.#map.set(key, from.get(key)); }
    get(key) { return this.#map.get(key); }
    set(key, bytes) { this.#map.set(key, bytes); }
    delete(key) { return this.#map.delete(key); }
    keys() { return [...this.#map.keys()].sort(compareKeys); }
    clear() { this.#map.clear(); }
  }

  function listEntries(entries, options = {}) {
    const o = options === null || options === undefined ? {} : options;
    let keys = entries.keys();
    if (o.prefix !== undefined) keys = keys.filter(k => k.startsWith(String(o.prefix)));
    if (o.start !== undefined) keys = keys.filter(k => compareKeys(k, String(o.start)) >= 0);
    if (o.startAfter !== undefined) keys = keys.filter(k => compareKeys(k, String(o.startAfter)) > 0);
    if (o.end !== undefined) keys = keys.filter(k => compareKeys(k, String(o.end)) < 0);
    if (o.reverse) keys.reverse();
    if (o.limit !== undefined) {
      const limit = Number(o.limit);
      if (!(limit > 0)) throw new TypeError('List limit must be positive.');
      keys = keys.slice(0, limit);
    }
    return new Map(keys.map(k => [k, deserialize(entries.get(k))]));
  }
  // The operations of storage and of a transaction, over `entries`.
  function storageOps(entries) {
    return {
      get(keys) {
        if (Array.isArray(keys)) {
          const found = keys.map(textKey).filter(k => entries.get(k) !== undefined).sort(compareKeys);
          return new Map(found.map(k => [k, deserialize(entries.get(k))]));
        }
        const bytes = entries.get(textKey(keys));
        return bytes === undefined ? undefined : deserialize(bytes);
      },
      put(key, value) {
        if (key !== null && typeof key === 'object' && !Array.isArray(key)) {
          const serialized = Object.entries(key).map(([k, v]) => [k, serialize(v)]);
          for (const [k, bytes] of serialized) entries.set(k, bytes);
          return undefined;
        }
        if (value === undefined) throw new TypeError('Storage put() needs a value (undefined cannot be stored).');
        entries.set(textKey(key), serialize(value));
        return undefined;
      },
      delete(keys) {
        if (Array.isArray(keys)) return keys.map(textKey).reduce((n, k) => n + (entries.delete(k) ? 1 : 0), 0);
        return entries.delete(textKey(keys));
      },
      list(options) { return listEntries(entries, options); },
    };
  }

  class DurableObjectTransaction {
    #ops; #rolledBack = false; #gate;
    constructor(t, entries, gate) { illegal(t); this.#ops = storageOps(entries); this.#gate = gate; }
    #run(op, args) {
      if (this.#rolledBack) return Promise.reject(new Error('Transaction has already been rolled back.'));
      return held(this.#gate, () => this.#ops[op](...args));
    }
    get(...args) { return this.#run('get', args); }
    put(...args) { return this.#run('put', args); }
    delete(...args) { return this.#run('delete', args); }
    list(...args) { return this.#run('list', args); }
    rollback() { this.#rolledBack = true; }
    get rolledBack() { return this.#rolledBack; }
    getAlarm() { throw missingApi('Durable Object alarms (transaction.getAlarm)'); }
    setAlarm() { throw missingApi('Durable Object alarms (transaction.setAlarm)'); }
    deleteAlarm() { throw missingApi('Durable Object alarms (transaction.deleteAlarm)'); }
  }

  // Runs a storage operation while holding the gate: its result (or error)
  // as a promise, the hold ending in a later macrotask.
  function held(gate, operation) {
    gate.hold();
    try {
      return Promise.resolve(operation());
    } catch (error) {
      return Promise.reject(error);
    } finally {
      gate.release();
    }
  }

  class DurableObjectStorage {
    #ops = storageOps(hostEntries); #gate; #sqlite;
    constructor(t, gate, sqlite) { illegal(t); this.#gate = gate; this.#sqlite = sqlite; }
    get(keys) { return held(this.#gate, () => this.#ops.get(keys)); }
    put(key, value) { return held(this.#gate, () => this.#ops.put(key, value)); }
    delete(keys) { return held(this.#gate, () => this.#ops.delete(keys)); }
    list(options) { return held(this.#gate, () => this.#ops.list(options)); }
    deleteAll() { return held(this.#gate, () => { hostEntries.clear(); }); }
    sync() { return Promise.resolve(); }
    // The closure works on a copy of the entries; they replace the storage's
    // when it settles, unless it threw or called txn.rollback().
    async transaction(closure) {
      const working = new WorkingEntries(hostEntries);
      const txn = new DurableObjectTransaction(token, working, this.#gate);
      this.#gate.hold();
      try {
        const result = await closure(txn);
        if (!txn.rolledBack) {
          hostEntries.clear();
          for (const key of working.keys()) hostEntries.set(key, working.get(key));
        }
        return result;
      } finally {
        this.#gate.release();
      }
    }
    transactionSync() { throw missingApi('ctx.storage.transactionSync() (SQLite-backed storage)'); }
    get sql() { throw missingApi(this.#sqlite ? 'ctx.storage.sql (SQLite-backed Durable Objects)' : 'ctx.storage.sql'); }
    getAlarm() { throw missingApi('Durable Object alarms (ctx.storage.getAlarm)'); }
    setAlarm() { throw missingApi('Durable Object alarms (ctx.storage.setAlarm)'); }
    deleteAlarm() { throw missingApi('Durable Object alarms (ctx.storage.deleteAlarm)'); }
  }

  return { DurableObjectStorage };
}
