// AbortSignal and AbortController.

import { DOMException } from './dom_exception.js';
import { Event, EventTarget } from './events.js';
import { setTimeout } from './timers.js';

let abortSignal;  // set by AbortSignal's static block
class AbortSignal extends EventTarget {
  #aborted = false; #reason = undefined; #onabort = null;
  get aborted() { return this.#aborted; }
  // Called by dispatchEvent (as on<type>) before the listeners.
  get onabort() { return this.#onabort; }
  set onabort(handler) { this.#onabort = typeof handler === 'function' ? handler : null; }
  get reason() { return this.#reason; }
  throwIfAborted() { if (this.#aborted) throw this.#reason; }
  // Private to this file (AbortController and the statics abort signals).
  static {
    abortSignal = (signal, reason) => {
      if (signal.#aborted) return;
      signal.#aborted = true;
      signal.#reason = reason === undefined ? new DOMException('The operation was aborted', 'AbortError') : reason;
      signal.dispatchEvent(new Event('abort'));
    };
  }
  static abort(reason) { const signal = new AbortSignal(); abortSignal(signal, reason); return signal; }
  static timeout(ms) {
    const signal = new AbortSignal();
    setTimeout(() => abortSignal(signal, new DOMException('The operation timed out', 'TimeoutError')), ms);
    return signal;
  }
  static any(signals) {
    const signal = new AbortSignal();
    for (const s of signals) {
      if (s.aborted) { abortSignal(signal, s.reason); break; }
      s.addEventListener('abort', () => abortSignal(signal, s.reason), { once: true });
    }
    return signal;
  }
}
class AbortController {
  #signal = new AbortSignal();
  get signal() { return this.#signal; }
  abort(reason) { abortSignal(this.#signal, reason); }
}

export { AbortSignal, AbortController };
