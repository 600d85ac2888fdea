// Event and the events workerd defines, EventTarget.

import { illegalConstructor } from './runtime_token.js';

// ---- events and abort ----

// An event's state lives in private fields (a worker sees only the
// accessors, as in workerd); EventTarget moves it through dispatch with these,
// set by Event's static block:
let beginDispatch, endDispatch, stoppedImmediately;
class Event {
  #type; #bubbles; #cancelable; #composed;
  #defaultPrevented = false; #stopped = false; #stoppedImmediately = false;
  #target = null; #dispatching = false;
  constructor(type, init = {}) {
    if (arguments.length === 0) throw new TypeError('Failed to construct \'Event\': constructor parameter 1 is not of type \'string\'.');
    this.#type = String(type);
    this.#bubbles = Boolean(init.bubbles);
    this.#cancelable = Boolean(init.cancelable);
    this.#composed = Boolean(init.composed);
  }
  get type() { return this.#type; }
  get bubbles() { return this.#bubbles; }
  get cancelable() { return this.#cancelable; }
  get composed() { return this.#composed; }
  get defaultPrevented() { return this.#defaultPrevented; }
  get returnValue() { return !this.#defaultPrevented; }
  get isTrusted() { return false; }  // events a worker makes; the runtime dispatches none through here
  get timeStamp() { return 0; }  // workerd reports 0 too: no clock reading through events
  // There is no tree: an event is at its target while dispatched, nowhere before.
  get eventPhase() { return this.#dispatching ? Event.AT_TARGET : Event.NONE; }
  get target() { return this.#target; }
  get srcElement() { return this.#target; }
  // workerd leaves currentTarget at the target after the dispatch.
  get currentTarget() { return this.#target; }
  composedPath() { return this.#dispatching ? [this.#target] : []; }
  get cancelBubble() { return this.#stopped; }
  set cancelBubble(value) { if (value) this.#stopped = true; }
  preventDefault() { if (this.#cancelable) this.#defaultPrevented = true; }
  stopPropagation() { this.#stopped = true; }
  // Only the immediate flag, as workerd: cancelBubble stays false.
  stopImmediatePropagation() { this.#stoppedImmediately = true; }
  static {
    beginDispatch = (event, target) => { event.#target = target; event.#dispatching = true; };
    endDispatch = event => { event.#dispatching = false; };
    stoppedImmediately = event => event.#stoppedImmediately;
  }
}
for (const [name, value] of [['NONE', 0], ['CAPTURING_PHASE', 1], ['AT_TARGET', 2], ['BUBBLING_PHASE', 3]]) {
  Object.defineProperty(Event, name, { value, enumerable: true });
  Object.defineProperty(Event.prototype, name, { value, enumerable: true });
}
class CustomEvent extends Event {
  #detail;
  constructor(type, init = {}) { super(type, init); this.#detail = init.detail === undefined ? null : init.detail; }
  get detail() { return this.#detail; }
}
// The other events workerd defines, with its layout: ErrorEvent's fields are
// accessors, MessageEvent's and CloseEvent's the instance's own.
class ErrorEvent extends Event {
  #message; #filename; #lineno; #colno; #error;
  constructor(type, init = {}) {
    super(type, init);
    this.#message = init.message === undefined ? '' : String(init.message);
    this.#filename = init.filename === undefined ? '' : String(init.filename);
    this.#lineno = init.lineno === undefined ? 0 : init.lineno >>> 0;
    this.#colno = init.colno === undefined ? 0 : init.colno >>> 0;
    this.#error = init.error;
  }
  get message() { return this.#message; }
  get filename() { return this.#filename; }
  get lineno() { return this.#lineno; }
  get colno() { return this.#colno; }
  get error() { return this.#error; }
}
class MessageEvent extends Event {
  constructor(type, init = {}) {
    super(type, init);
    Object.defineProperties(this, {
      ports: { value: init.ports === undefined ? [] : Array.from(init.ports), enumerable: true },
      source: { value: init.source === undefined ? null : init.source, enumerable: true },
      lastEventId: { value: init.lastEventId === undefined ? '' : String(init.lastEventId), enumerable: true },
      origin: { value: init.origin === undefined ? '' : String(init.origin), enumerable: true },
      data: { value: init.data === undefined ? null : init.data, enumerable: true },
    });
  }
}
class CloseEvent extends Event {
  constructor(type, init = {}) {
    super(type, init);
    Object.defineProperties(this, {
      code: { value: init.code === undefined ? 0 : init.code & 0xffff, enumerable: true },
      reason: { value: init.reason === undefined ? '' : String(init.reason), enumerable: true },
      wasClean: { value: Boolean(init.wasClean), enumerable: true },
    });
  }
}
// The event a service-worker style script's fetch listeners get; only the
// runtime makes one (state: what respondWith was given).
class ExtendableEvent extends Event {
  #ctx;
  constructor(token, type, ctx) { illegalConstructor(token); super(type); this.#ctx = ctx; }
  waitUntil(promise) { this.#ctx.waitUntil(promise); }
}
class FetchEvent extends ExtendableEvent {
  #state;
  constructor(token, request, ctx, state) {
    super(token, 'fetch', ctx);
    this.request = request;
    this.#state = state;
  }
  respondWith(response) {
    if (this.#state.responded) throw new Error('respondWith() was already called for this request');
    this.#state.responded = true;
    this.#state.response = Promise.resolve(response);
  }
  passThroughOnException() {}  // there is no origin behind the runtime to pass the request to
}
class EventTarget {
  #listeners = new Map();
  addEventListener(type, listener, options) {
    if (listener == null) return;
    const list = this.#listeners.get(type) || [];
    if (list.some(entry => entry.listener === listener)) return;
    list.push({ listener, once: Boolean(options && options.once) });
    this.#listeners.set(type, list);
  }
  removeEventListener(type, listener) {
    const list = this.#listeners.get(type);
    if (list) this.#listeners.set(type, list.filter(entry => entry.listener !== listener));
  }
  dispatchEvent(event) {
    if (!(event instanceof Event)) throw new TypeError('Failed to execute \'dispatchEvent\' on \'EventTarget\': parameter 1 is not of type \'Event\'.');
    beginDispatch(event, this);
    try {
      // An on<type> handler (onabort...) runs before the listeners, as in workerd.
      const handler = this['on' + event.type];
      if (typeof handler === 'function') handler.call(this, event);
      for (const entry of (this.#listeners.get(event.type) || []).slice()) {
        if (stoppedImmediately(event)) break;
        if (entry.once) this.removeEventListener(event.type, entry.listener);
        if (typeof entry.listener === 'function') entry.listener.call(this, event);
        else entry.listener.handleEvent(event);
      }
    } finally {
      endDispatch(event);
    }
    return !event.defaultPrevented;
  }
}

export { Event, CustomEvent, ErrorEvent, MessageEvent, CloseEvent, ExtendableEvent, FetchEvent, EventTarget };
