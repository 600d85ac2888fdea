// node:events: EventEmitter from the npm package `events` (Node's own
// EventEmitter, ported), with the module-level helpers workerd's node:events
// has and the package predates.
export function makeEvents(host) {
  const EventEmitter = require('events');
  const errorMonitor = Symbol('events.errorMonitor');
  const captureRejectionSymbol = Symbol.for('nodejs.rejection');
  // emit('error') tells errorMonitor's listeners first, as Node's does.
  const emit = EventEmitter.prototype.emit;
  EventEmitter.prototype.emit = function (type, ...args) {
    if (type === 'error' && this._events !== undefined && this._events[errorMonitor] !== undefined) {
      emit.call(this, errorMonitor, ...args);
    }
    return emit.call(this, type, ...args);
  };
  const isEventTarget = target => target !== null && typeof target === 'object' && typeof target.addEventListener === 'function' &&
    typeof target.listeners !== 'function';
  function getEventListeners(target, name) {
    if (typeof target.listeners === 'function') return target.listeners(name);
    throw new TypeError('The "emitter" argument must be an instance of EventEmitter');
  }
  function getMaxListeners(target) {
    if (typeof target.getMaxListeners === 'function') return target.getMaxListeners();
    return EventEmitter.defaultMaxListeners;
  }
  function setMaxListeners(n = EventEmitter.defaultMaxListeners, ...targets) {
    if (typeof n !== 'number' || n < 0 || Number.isNaN(n)) {
      throw new RangeError('The value of "n" is out of range. It must be a non-negative number. Received ' + String(n));
    }
    if (targets.length === 0) EventEmitter.defaultMaxListeners = n;
    for (const target of targets) {
      if (typeof target.setMaxListeners === 'function') target.setMaxListeners(n);
      else if (!isEventTarget(target)) throw new TypeError('The "eventTargets" argument must be an instance of EventEmitter or EventTarget');
    }
  }
  function addAbortListener(signal, listener) {
    if (signal === undefined || signal === null) throw new TypeError('The "signal" argument must be an instance of AbortSignal');
    if (typeof listener !== 'function') throw new TypeError('The "listener" argument must be of type function');
    if (signal.aborted) {
      queueMicrotask(() => listener());
      return { [Symbol.dispose || Symbol.for('nodejs.dispose')]() {} };
    }
    signal.addEventListener('abort', listener, { once: true });
    return { [Symbol.dispose || Symbol.for('nodejs.dispose')]() { signal.removeEventListener('abort', listener); } };
  }
  let captureRejections = false;
  Object.defineProperties(EventEmitter, {
    errorMonitor: { value: errorMonitor, enumerable: true, writable: false, configurable: true },
    captureRejectionSymbol: { value: captureRejectionSymbol, enumerable: true, writable: false, configurable: true },
    captureRejections: { get: () => captureRejections, set: v => { captureRejections = Boolean(v); }, enumerable: true, configurable: true },
    usingDomains: { value: false, enumerable: true, writable: true, configurable: true },
  });
  Object.assign(EventEmitter, { getEventListeners, getMaxListeners, setMaxListeners, addAbortListener });
  const exports = {
    EventEmitter, addAbortListener, captureRejectionSymbol, errorMonitor, getEventListeners, getMaxListeners,
    listenerCount: EventEmitter.listenerCount, once: EventEmitter.once, setMaxListeners, usingDomains: false,
    defaultMaxListeners: EventEmitter.defaultMaxListeners,
  };
  Object.defineProperty(exports, 'captureRejections', { get: () => captureRejections, enumerable: true });
  exports.default = EventEmitter;
  return exports;
}
