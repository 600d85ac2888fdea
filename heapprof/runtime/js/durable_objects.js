// Durable Objects for heapprof's embedded runtime: the namespaces of a
// worker's [[durable_objects.bindings]] (env.NS), their ids, stubs (fetch()
// and RPC methods), one instance per id with its in-memory ctx.storage, and
// the input gate that keeps one object's events from interleaving while its
// storage is in use. Bundled into the libraries script (libraries.js); the
// prelude hands it the Web API classes it needs (`host`) and wires env and
// the worker's module exports to it.
//
// Where the objects live: in the worker's own isolate, each object a plain
// instance of the worker's class (workerd also runs every object of a
// namespace in one isolate). Arguments, results and stored values are copied
// by V8's serializer (host.structuredClone), so no object shares a JavaScript
// value with its caller, as if it lived elsewhere.
//
// ids follow workerd's: the namespace's key is SHA-256 of its unique key
// ("<worker name>-<class>", as wrangler names it); idFromName's first 16
// bytes are HMAC-SHA-256(key, name), the last 16 HMAC-SHA-256(key, first 16),
// so an id is the same 64 hex digits in both runtimes.

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

const hex = bytes => Array.from(bytes, b => b.toString(16).padStart(2, '0')).join('');

export function makeDurableObjects(host) {
  const { DurableObject, Request, Response, structuredClone, hmac, digest, randomFill, utf8Encode, defer, missingApi } = host;
  const token = Symbol('durable-objects');
  const illegal = t => { if (t !== token) throw new TypeError('Illegal constructor'); };
  const namespaces = [];
  let moduleExports = null;

  // A copy through V8's serializer whose failure is a DataCloneError, as structuredClone's is.
  const copy = value => structuredClone(value);

  // ---- the input gate ----

  // Events (fetch, RPC calls) wait in `queue` and start one a macrotask
  // (after the microtasks of what runs now), only while no storage
  // operation or blockConcurrencyWhile holds the gate. A storage operation's
  // promise settles in a microtask, but its hold ends in a macrotask: the
  // code after `await storage.get()` runs before any other event is
  // delivered, so a read-modify-write is never interleaved.
  class Gate {
    holds = 0;
    queue = [];
    scheduled = false;
    constructor(start) { this.start = start; }
    hold() { this.holds++; }
    release() {
      defer(() => {
        this.holds--;
        this.pump();
      });
    }
    enqueue(event) {
      this.queue.push(event);
      this.pump();
    }
    pump() {
      if (this.scheduled || this.holds > 0 || this.queue.length === 0) return;
      this.scheduled = true;
      // One event per macrotask: the one started runs its microtasks (an
      // in-memory body read, storage calls that take the gate) first.
      defer(() => {
        this.scheduled = false;
        if (this.holds === 0 && this.queue.length > 0) this.start(this.queue.shift());
        this.pump();
      });
    }
  }

  // ---- ids ----

  class DurableObjectId {
    #hex;
    #namespace;
    constructor(t, namespace, hexId, name) {
      illegal(t);
      this.#namespace = namespace;
      this.#hex = hexId;
      if (name !== undefined) Object.defineProperty(this, 'name', { value: name, enumerable: true });
    }
    toString() { return this.#hex; }
    equals(other) { return other instanceof DurableObjectId && other.#hex === this.#hex; }
    static namespaceOf(id) { return id.#namespace; }
  }
  const namespaceOf = id => DurableObjectId.namespaceOf(id);

  // ---- storage (in memory, kept for the run; values copied in and out) ----

  function listEntries(map, options = {}) {
    const o = options === null || options === undefined ? {} : options;
    let keys = [...map.keys()].sort(compareKeys);
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
    return new Map(keys.map(k => [k, copy(map.get(k))]));
  }
  // The operations of storage and of a transaction, over `map` (Map key -> stored copy).
  function storageOps(map) {
    return {
      get(keys) {
        if (Array.isArray(keys)) {
          const found = keys.map(textKey).filter(k => map.has(k)).sort(compareKeys);
          return new Map(found.map(k => [k, copy(map.get(k))]));
        }
        const k = textKey(keys);
        return map.has(k) ? copy(map.get(k)) : undefined;
      },
      put(key, value) {
        if (key !== null && typeof key === 'object' && !Array.isArray(key)) {
          const entries = Object.entries(key).map(([k, v]) => [k, copy(v)]);
          for (const [k, v] of entries) map.set(k, v);
          return undefined;
        }
        if (value === undefined) throw new TypeError('Storage put() needs a value (undefined cannot be stored).');
        map.set(textKey(key), copy(value));
        return undefined;
      },
      delete(keys) {
        if (Array.isArray(keys)) return keys.map(textKey).reduce((n, k) => n + (map.delete(k) ? 1 : 0), 0);
        return map.delete(textKey(keys));
      },
      list(options) { return listEntries(map, options); },
    };
  }

  class DurableObjectTransaction {
    #ops; #rolledBack = false; #gate;
    constructor(t, map, gate) { illegal(t); this.#ops = storageOps(map); this.#gate = gate; }
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
    #map; #gate; #sqlite;
    constructor(t, map, gate, sqlite) { illegal(t); this.#map = map; this.#gate = gate; this.#sqlite = sqlite; }
    get(keys) { return held(this.#gate, () => storageOps(this.#map).get(keys)); }
    put(key, value) { return held(this.#gate, () => storageOps(this.#map).put(key, value)); }
    delete(keys) { return held(this.#gate, () => storageOps(this.#map).delete(keys)); }
    list(options) { return held(this.#gate, () => storageOps(this.#map).list(options)); }
    deleteAll() { return held(this.#gate, () => { this.#map.clear(); }); }
    sync() { return Promise.resolve(); }
    // The closure works on a copy of the entries; they replace the storage's
    // when it settles, unless it threw or called txn.rollback().
    async transaction(closure) {
      const working = new Map(this.#map);
      const txn = new DurableObjectTransaction(token, working, this.#gate);
      this.#gate.hold();
      try {
        const result = await closure(txn);
        if (!txn.rolledBack) {
          this.#map.clear();
          for (const [k, v] of working) this.#map.set(k, v);
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

  // ctx (DurableObject form) or state (classic form) of one object.
  class DurableObjectState {
    #gate; #waits = [];
    constructor(t, id, storage, gate) {
      illegal(t);
      this.#gate = gate;
      Object.defineProperty(this, 'id', { value: id, enumerable: true });
      Object.defineProperty(this, 'storage', { value: storage, enumerable: true });
    }
    // No event is delivered until `callback`'s promise settles.
    blockConcurrencyWhile(callback) {
      this.#gate.hold();
      let result;
      try {
        result = Promise.resolve(callback());
      } catch (error) {
        result = Promise.reject(error);
      }
      const release = () => this.#gate.release();
      result.then(release, release);
      return result;
    }
    waitUntil(promise) { this.#waits.push(Promise.resolve(promise)); }
    abort() { throw missingApi('ctx.abort()'); }
    acceptWebSocket() { throw missingApi('WebSocket hibernation (ctx.acceptWebSocket)'); }
    getWebSockets() { return []; }
  }

  // ---- objects and their events ----

  // What an RPC error looks like after crossing the stub: V8's serializer
  // keeps an Error's type (Error, TypeError, RangeError, ...), message and
  // stack and drops its other properties; a thrown non-Error becomes an
  // Error of its text.
  function crossingError(error) {
    if (error instanceof Error) {
      try { return copy(error); } catch { return new Error(String(error.message)); }
    }
    return new Error(String(error));
  }

  class ObjectRecord {
    constructor(namespace, id) {
      this.namespace = namespace;
      this.id = id;
      this.map = new Map();
      this.instance = null;
      this.requests = 0;
      this.gate = new Gate(event => this.start(event));
      this.state = null;
    }
    // The instance, made at the first event (its constructor may hold the gate).
    instantiate() {
      if (this.instance !== null) return this.instance;
      const cls = this.namespace.resolveClass();
      const storage = new DurableObjectStorage(token, this.map, this.gate, this.namespace.sqlite);
      this.state = new DurableObjectState(token, this.id, storage, this.gate);
      this.instance = new cls(this.state, this.namespace.env);
      return this.instance;
    }
    start(event) {
      this.requests++;
      let result;
      try {
        const instance = this.instantiate();
        if (this.gate.holds > 0) {  // the constructor's blockConcurrencyWhile: this event waits for it
          this.requests--;
          this.gate.queue.unshift(event);
          return;
        }
        result = event.run(instance);
      } catch (error) {
        event.reject(error);
        return;
      }
      Promise.resolve(result).then(event.resolve, event.reject);
    }
    deliver(run) {
      return new Promise((resolve, reject) => this.gate.enqueue({ run, resolve, reject }));
    }
  }

  const rpcRefused = 'The receiving Durable Object does not support RPC, because its class was not declared with ' +
    '`extends DurableObject`. In order to enable RPC, make sure your class extends the special class ' +
    '`DurableObject`, which can be imported from the module "cloudflare:workers".';
  // The method `name` of an instance as RPC sees it: from its class's
  // prototype chain (not the instance's own properties, not Object's or
  // DurableObject's methods).
  function rpcMember(instance, name) {
    for (let proto = Object.getPrototypeOf(instance); proto !== null && proto !== Object.prototype &&
         proto !== DurableObject.prototype; proto = Object.getPrototypeOf(proto)) {
      const descriptor = Object.getOwnPropertyDescriptor(proto, name);
      if (descriptor !== undefined) return descriptor.get !== undefined ? descriptor.get.call(instance) : descriptor.value;
    }
    return undefined;
  }

  function rpcCall(record, name, args) {
    let sent;
    try {
      sent = copy(args);
    } catch (error) {
      return Promise.reject(error);
    }
    return record.deliver(instance => {
      if (!(instance instanceof DurableObject)) throw new TypeError(rpcRefused);
      const member = rpcMember(instance, name);
      if (sent === null) return member;  // a property read (await stub.prop)
      if (typeof member !== 'function' || name === 'constructor') {
        throw new TypeError(`The RPC receiver does not implement the method "${name}".`);
      }
      return member.apply(instance, sent);
    }).then(value => copy(value), error => { throw crossingError(error); });
  }

  async function fetchCall(record, input, init) {
    const request = new Request(input, init);
    const response = await record.deliver(instance => {
      if (typeof instance.fetch !== 'function') {
        throw new TypeError('Handler does not export a fetch() function.');
      }
      return instance.fetch(new Request(request));
    }).catch(error => { throw crossingError(error); });
    if (!(response instanceof Response)) {
      throw new TypeError("Incorrect type for Promise: the Promise did not resolve to 'Response'.");
    }
    return new Response(response.body, response);
  }

  // A stub: fetch(), id, name, and any other property is an RPC method
  // (callable; awaiting it reads the property).
  class DurableObjectStub {
    #record; #name;
    constructor(t, record, name) {
      illegal(t);
      this.#record = record;
      this.#name = name;
    }
    get id() { return this.#record.id; }
    get name() { return this.#name; }
    fetch(input, init) { return fetchCall(this.#record, input, init); }
    connect() { throw missingApi('stub.connect()'); }
    static rpc(stub, name) {
      const record = stub.#record;
      const method = (...args) => rpcCall(record, name, args);
      method.then = (resolve, reject) => rpcCall(record, name, null).then(resolve, reject);
      return method;
    }
  }
  const own = new Set(['id', 'name', 'fetch', 'connect', 'constructor']);
  function makeStub(record, name) {
    const stub = new DurableObjectStub(token, record, name);
    return new Proxy(stub, {
      get(target, property) {
        if (typeof property === 'symbol' || own.has(property)) {
          const value = Reflect.get(target, property, target);
          return typeof value === 'function' && property !== 'constructor' ? value.bind(target) : value;
        }
        if (property === 'then') return undefined;  // a stub is not a promise
        return DurableObjectStub.rpc(target, property);
      },
    });
  }

  // ---- namespaces ----

  class DurableObjectNamespace {
    #binding; #className; #key; #objects = new Map(); #sqlite;
    env = null;
    constructor(t, binding, className, uniqueKey, sqlite) {
      illegal(t);
      this.#binding = binding;
      this.#className = className;
      this.#key = digest('SHA-256', utf8Encode(uniqueKey));
      this.#sqlite = sqlite;
      namespaces.push(this);
    }
    #id(first16, name) {
      const id = new Uint8Array(32);
      id.set(first16.subarray(0, 16), 0);
      id.set(new Uint8Array(hmac('SHA-256', this.#key, first16.subarray(0, 16))).subarray(0, 16), 16);
      return new DurableObjectId(token, this, hex(id), name);
    }
    idFromName(name) {
      const text = String(name);
      return this.#id(new Uint8Array(hmac('SHA-256', this.#key, utf8Encode(text))), text);
    }
    newUniqueId(options) {
      if (options && options.jurisdiction !== undefined) {
        throw new Error('Jurisdiction restrictions are not implemented in workerd.');
      }
      return this.#id(randomFill(new Uint8Array(16)), undefined);
    }
    idFromString(text) {
      const s = String(text);
      if (!/^[0-9a-fA-F]{64}$/.test(s)) throw new TypeError('Invalid Durable Object ID: must be 64 hex digits');
      const bytes = new Uint8Array(32);
      for (let i = 0; i < 32; i++) bytes[i] = parseInt(s.slice(2 * i, 2 * i + 2), 16);
      const id = this.#id(bytes.subarray(0, 16), undefined);
      if (id.toString().slice(32) !== s.slice(32).toLowerCase()) {
        throw new TypeError('Durable Object ID is not valid for this namespace.');
      }
      return id;
    }
    get(id, options) {
      if (!(id instanceof DurableObjectId)) throw new TypeError('get() needs a DurableObjectId of this namespace.');
      if (namespaceOf(id) !== this) throw new TypeError('The ID is not for this namespace.');
      if (options && options.locationHint === undefined && Object.keys(options).length > 0) {
        throw missingApi('DurableObjectNamespace.get() options other than locationHint');
      }
      return makeStub(this.#record(id), id.name);
    }
    getByName(name, options) { return this.get(this.idFromName(name), options); }
    jurisdiction() { throw new Error('Jurisdiction restrictions are not implemented in workerd.'); }
    #record(id) {
      const hexId = id.toString();
      let record = this.#objects.get(hexId);
      if (record === undefined) {
        record = new ObjectRecord(this, id);
        this.#objects.set(hexId, record);
      }
      return record;
    }
    get sqlite() { return this.#sqlite; }
    // The worker's class of this namespace (checked once the worker's module has loaded).
    resolveClass() {
      const cls = moduleExports === null ? undefined : moduleExports[this.#className];
      if (typeof cls !== 'function') {
        throw new Error(`env.${this.#binding}: the worker exports no class ${this.#className}`);
      }
      return cls;
    }
    static describe(ns) {
      return {
        binding: ns.#binding, className: ns.#className,
        objects: [...ns.#objects.values()].filter(r => r.requests > 0).map(r => ({ id: r.id.toString(), name: r.id.name ?? '', requests: r.requests })),
      };
    }
  }

  return {
    // env.<binding> for a [[durable_objects.bindings]] entry; `sqlite` when
    // the migrations made the class with new_sqlite_classes.
    makeNamespace(binding, className, uniqueKey, sqlite) {
      return new DurableObjectNamespace(token, binding, className, uniqueKey, Boolean(sqlite));
    },
    // After the worker's module is evaluated: its exports, and the env every
    // object gets. Returns the problems (a binding whose class is missing), or [].
    setExports(exports, env) {
      moduleExports = exports;
      const problems = [];
      for (const ns of namespaces) {
        ns.env = env;
        try { ns.resolveClass(); } catch (error) { problems.push(error.message); }
      }
      return problems;
    },
    // Every namespace with its objects and their request counts (for the run's report).
    describe() { return namespaces.map(ns => DurableObjectNamespace.describe(ns)); },
  };
}
