// Durable Objects for heapprof's embedded runtime: the namespaces of a
// worker's [[durable_objects.bindings]] (env.NS), their ids, stubs (fetch()
// and RPC methods), one instance per id with its in-memory ctx.storage, and
// the input gate that keeps one object's events from interleaving while its
// storage is in use. Bundled into the libraries script (libraries.js); the
// prelude hands it the Web API classes it needs (`host`) and wires env and
// the worker's module exports to it.
//
// Where the objects live: each object in an isolate of its own (workerd runs
// every object of a namespace in one isolate), the worker's isolate holding
// stubs only. The same module runs in both: a stub's call is an envelope
// serialized by V8's serializer and handed to host.objectCall, which runs it
// to completion in the object's isolate (heapprof/runtime/
// durable_object_host.h) and answers the serialized outcome; there `serve`
// delivers it to the one instance of the isolate through the input gate.
// A Request or Response crosses as its parts (method, URL, headers, body
// bytes); an error as V8's serializer keeps it. Storage values are
// serialized into the host's storage, outside the object's isolate.
//
// ids follow workerd's: the namespace's key is SHA-256 of its unique key
// ("<worker name>-<class>", as wrangler names it); idFromName's first 16
// bytes are HMAC-SHA-256(key, name), the last 16 HMAC-SHA-256(key, first 16),
// so an id is the same 64 hex digits in both runtimes.

import { makeStorage } from './durable_object_storage.js';

const hex = bytes => Array.from(bytes, b => b.toString(16).padStart(2, '0')).join('');

export function makeDurableObjects(host) {
  const {
    DurableObject, Request, Response, structuredClone, hmac, digest, randomFill, utf8Encode, defer, missingApi,
    objectCall, objectStorage, serialize: nativeSerialize, deserialize,
  } = host;
  const token = Symbol('durable-objects');
  const illegal = t => { if (t !== token) throw new TypeError('Illegal constructor'); };
  const namespaces = [];
  let moduleExports = null;

  // V8's serializer; what it cannot copy fails as structuredClone does (a DataCloneError).
  const serialize = value => {
    try {
      return nativeSerialize(value);
    } catch (error) {
      structuredClone(value);
      throw error;
    }
  };

  const { DurableObjectStorage } = makeStorage({ token, illegal, serialize, deserialize, objectStorage, missingApi });

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

  // ---- the object this isolate serves, and its events ----

  // What an error looks like after crossing the stub: V8's serializer keeps
  // an Error's type (Error, TypeError, RangeError, ...), message and stack
  // and drops its other properties; a thrown non-Error becomes an Error of
  // its text. The serialized outcome { ok: false, error }.
  function failed(error) {
    if (error instanceof Error) {
      try { return serialize({ ok: false, error }); } catch { return serialize({ ok: false, error: new Error(String(error.message)) }); }
    }
    return serialize({ ok: false, error: new Error(String(error)) });
  }

  class ObjectRecord {
    constructor(namespace, id) {
      this.namespace = namespace;
      this.id = id;
      this.instance = null;
      this.gate = new Gate(event => this.start(event));
    }
    // The instance, made at the first event (its constructor may hold the gate).
    instantiate() {
      if (this.instance !== null) return this.instance;
      const cls = this.namespace.resolveClass();
      const storage = new DurableObjectStorage(token, this.gate, this.namespace.sqlite);
      const state = new DurableObjectState(token, this.id, storage, this.gate);
      this.instance = new cls(state, this.namespace.env);
      return this.instance;
    }
    start(event) {
      let result;
      try {
        const instance = this.instantiate();
        if (this.gate.holds > 0) {  // the constructor's blockConcurrencyWhile: this event waits for it
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
  let served = null;  // the ObjectRecord of this isolate's object

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

  // One event of an envelope on the instance: the value of an RPC call or
  // property read, or the parts of fetch()'s Response.
  async function runEvent(instance, event) {
    if (event.kind === 'fetch') {
      if (typeof instance.fetch !== 'function') throw new TypeError('Handler does not export a fetch() function.');
      const request = new Request(event.url, { method: event.method, headers: event.headers, body: event.body });
      const response = await instance.fetch(request);
      if (!(response instanceof Response)) {
        throw new TypeError("Incorrect type for Promise: the Promise did not resolve to 'Response'.");
      }
      const body = response.body === null ? null : new Uint8Array(await response.arrayBuffer());
      return { status: response.status, statusText: response.statusText, headers: [...response.headers], body };
    }
    if (!(instance instanceof DurableObject)) throw new TypeError(rpcRefused);
    const member = rpcMember(instance, event.method);
    if (event.kind === 'get') return { value: await member };  // a property read (await stub.prop)
    if (typeof member !== 'function' || event.method === 'constructor') {
      throw new TypeError(`The RPC receiver does not implement the method "${event.method}".`);
    }
    return { value: await member.apply(instance, event.args) };
  }

  // The host's side of a stub's call (in the object's isolate): the
  // serialized envelope in, a promise of the serialized outcome out.
  function serve(index, hexId, name, payload) {
    if (served === null) {
      const namespace = namespaces[index];
      served = new ObjectRecord(namespace, namespace.idOf(hexId, name === '' ? undefined : name));
    }
    let event;
    try {
      event = deserialize(payload);
    } catch (error) {
      return Promise.resolve(failed(error));
    }
    return served.deliver(instance => runEvent(instance, event)).then(outcome => {
      try {
        return serialize({ ok: true, ...outcome });
      } catch (error) {
        return failed(error);
      }
    }, failed);
  }

  // ---- stubs (in the caller's isolate) ----

  // Sends an envelope to the object of `id` in a later macrotask, as an
  // event is delivered; the outcome's value, or its error thrown.
  function send(id, envelope) {
    let payload;
    try {
      payload = serialize(envelope);
    } catch (error) {
      return Promise.reject(error);
    }
    return new Promise((resolve, reject) => defer(() => {
      try {
        resolve(deserialize(objectCall(namespaceOf(id).index, id.toString(), id.name ?? '', payload)));
      } catch (error) {
        reject(error);
      }
    })).then(outcome => {
      if (!outcome.ok) throw outcome.error;
      return outcome;
    });
  }

  const rpcCall = (id, name, args) =>
    send(id, args === null ? { kind: 'get', method: name } : { kind: 'rpc', method: name, args }).then(o => o.value);

  async function fetchCall(id, input, init) {
    const request = new Request(input, init);
    const body = request.body === null ? null : new Uint8Array(await request.arrayBuffer());
    const outcome = await send(id, { kind: 'fetch', method: request.method, url: request.url, headers: [...request.headers], body });
    return new Response(outcome.body, { status: outcome.status, statusText: outcome.statusText, headers: outcome.headers });
  }

  // A stub: fetch(), id, name, and any other property is an RPC method
  // (callable; awaiting it reads the property).
  class DurableObjectStub {
    #id; #name;
    constructor(t, id, name) {
      illegal(t);
      this.#id = id;
      this.#name = name;
    }
    get id() { return this.#id; }
    get name() { return this.#name; }
    fetch(input, init) { return fetchCall(this.#id, input, init); }
    connect() { throw missingApi('stub.connect()'); }
    static rpc(stub, name) {
      const id = stub.#id;
      const method = (...args) => rpcCall(id, name, args);
      method.then = (resolve, reject) => rpcCall(id, name, null).then(resolve, reject);
      return method;
    }
  }
  const own = new Set(['id', 'name', 'fetch', 'connect', 'constructor']);
  function makeStub(id, name) {
    const stub = new DurableObjectStub(token, id, name);
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
    #binding; #className; #key; #sqlite; #ids = new Map();
    env = null;
    constructor(t, binding, className, uniqueKey, sqlite) {
      illegal(t);
      this.#binding = binding;
      this.#className = className;
      this.#key = digest('SHA-256', utf8Encode(uniqueKey));
      this.#sqlite = sqlite;
      this.index = namespaces.length;
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
    // The id an object's isolate is told it serves (checked by the caller's namespace).
    idOf(hexId, name) { return new DurableObjectId(token, this, hexId, name); }
    get(id, options) {
      if (!(id instanceof DurableObjectId)) throw new TypeError('get() needs a DurableObjectId of this namespace.');
      if (namespaceOf(id) !== this) throw new TypeError('The ID is not for this namespace.');
      if (options && options.locationHint === undefined && Object.keys(options).length > 0) {
        throw missingApi('DurableObjectNamespace.get() options other than locationHint');
      }
      // Every stub of one object sends the id first used for it (its name included).
      const hexId = id.toString();
      if (!this.#ids.has(hexId)) this.#ids.set(hexId, id);
      return makeStub(this.#ids.get(hexId), id.name);
    }
    getByName(name, options) { return this.get(this.idFromName(name), options); }
    jurisdiction() { throw new Error('Jurisdiction restrictions are not implemented in workerd.'); }
    get sqlite() { return this.#sqlite; }
    // The worker's class of this namespace (checked once the worker's module has loaded).
    resolveClass() {
      const cls = moduleExports === null ? undefined : moduleExports[this.#className];
      if (typeof cls !== 'function') {
        throw new Error(`env.${this.#binding}: the worker exports no class ${this.#className}`);
      }
      return cls;
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
    serve,
  };
}
