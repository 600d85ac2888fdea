// node:async_hooks as workerd has it: AsyncLocalStorage and AsyncResource.
// The current frame (a Map of each AsyncLocalStorage to its store, or
// undefined outside every run()) is V8's continuation-preserved embedder
// data (host.getFrame / host.setFrame): V8 keeps it on every promise
// reaction when it is made and restores it while the reaction runs, so a
// store survives awaits and then() callbacks; the runtime's timers keep the
// frame they were scheduled in (worker_prelude.js). No promise hooks.
// createHook and the async ids are what workerd has: a hook that is never
// called and ids that are 0.
export function makeAsyncHooks(host) {
  const { getFrame, setFrame } = host;

  function runInFrame(frame, fn, thisArg, args) {
    const saved = getFrame();
    setFrame(frame);
    try {
      return Reflect.apply(fn, thisArg, args);
    } finally {
      setFrame(saved);
    }
  }
  // workerd's message for an argument that is not a function.
  function checkFunction(fn, method, on, position) {
    if (typeof fn !== 'function') {
      throw new TypeError("Failed to execute '" + method + "' on '" + on + "': parameter " + position + ' is not of type \'function\'.');
    }
  }

  class AsyncResource {
    #frame;
    #type;
    constructor(type, options = {}) {
      this.#type = type;
      this.#frame = getFrame();
    }
    runInAsyncScope(fn, thisArg, ...args) {
      checkFunction(fn, 'runInAsyncScope', 'AsyncResource', 1);
      return runInFrame(this.#frame, fn, thisArg, args);
    }
    // Without thisArg, `this` is the resource, as in workerd.
    bind(fn, thisArg = this) {
      checkFunction(fn, 'bind', 'AsyncResource', 1);
      const resource = this;
      const bound = function (...args) { return resource.runInAsyncScope(fn, thisArg, ...args); };
      Object.defineProperties(bound, {
        length: { value: fn.length, configurable: true },
        asyncResource: { value: this, configurable: true, enumerable: true, writable: true },
      });
      return bound;
    }
    emitDestroy() {}
    asyncId() { return 0; }
    triggerAsyncId() { return 0; }
    static bind(fn, type, thisArg) {
      checkFunction(fn, 'bind', 'AsyncResource', 1);
      return new AsyncResource(type || fn.name || 'bound-anonymous-fn').bind(fn, thisArg);
    }
  }

  class AsyncLocalStorage {
    #name;
    constructor(options = {}) {
      this.#name = options !== null && typeof options === 'object' && options.name !== undefined ? String(options.name) : '';
    }
    get name() { return this.#name; }
    static bind(fn) { return AsyncResource.bind(fn, 'AsyncLocalStorage.bind'); }
    static snapshot() {
      const frame = getFrame();
      return (fn, ...args) => { checkFunction(fn, 'snapshot', 'AsyncLocalStorage', 1); return runInFrame(frame, fn, undefined, args); };
    }
    run(store, fn, ...args) {
      checkFunction(fn, 'run', 'AsyncLocalStorage', 2);
      const frame = new Map(getFrame());
      frame.set(this, store);
      return runInFrame(frame, fn, undefined, args);
    }
    exit(fn, ...args) {
      checkFunction(fn, 'exit', 'AsyncLocalStorage', 1);
      const current = getFrame();
      if (current === undefined || !current.has(this)) return runInFrame(current, fn, undefined, args);
      const frame = new Map(current);
      frame.delete(this);
      return runInFrame(frame.size === 0 ? undefined : frame, fn, undefined, args);
    }
    getStore() {
      const frame = getFrame();
      return frame === undefined ? undefined : frame.get(this);
    }
    enterWith() { throw new Error('asyncLocalStorage.enterWith() is not implemented'); }
    // Leaves the current frame without this storage's store.
    disable() {
      const current = getFrame();
      if (current === undefined || !current.has(this)) return;
      const frame = new Map(current);
      frame.delete(this);
      setFrame(frame.size === 0 ? undefined : frame);
    }
  }

  class AsyncHook {
    enable() { return this; }
    disable() { return this; }
  }
  const createHook = () => new AsyncHook();
  const executionAsyncId = () => 0;
  const triggerAsyncId = () => 0;
  const executionAsyncResource = () => ({});
  const asyncWrapProviders = Object.freeze({ __proto__: null });
  const exports = {
    AsyncLocalStorage, AsyncResource, asyncWrapProviders, createHook, executionAsyncId, executionAsyncResource,
    triggerAsyncId,
  };
  return exports;
}
