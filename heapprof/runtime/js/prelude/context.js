// ctx of fetch(request, env, ctx), the global fetch and error listeners,
// reportError.

import { loadApi } from './host.js';

// ctx of fetch(request, env, ctx). Its methods live on the prototype, as
// workerd's do, rather than as two closures made for every request.
class ExecutionContext {
  #waits;
  constructor(waits) { this.#waits = waits; }
  waitUntil(promise) { this.#waits.push(Promise.resolve(promise)); }
  passThroughOnException() {}
}

const fetchListeners = [];
const errorListeners = [];  // the global 'error' event's, for reportError
const listenersOf = type => type === 'fetch' ? fetchListeners : type === 'error' ? errorListeners : null;
function removeEventListener(type, listener) {
  const list = listenersOf(type);
  const at = list === null ? -1 : list.indexOf(listener);
  if (at >= 0) list.splice(at, 1);
}
function addEventListener(type, listener) {
  const list = listenersOf(type);
  if (list !== null && typeof listener === 'function') list.push(listener);
}
// reportError(error): an ErrorEvent to the global 'error' listeners, as in
// workerd; with none, the error goes to the console as uncaught.
function reportError(error) {
  const message = 'Uncaught ' + (error instanceof Error ? error.name + ': ' + error.message : String(error));
  const { ErrorEvent } = loadApi('events.js');  // loaded at the first report (esbuild's lazy initialiser)
  const event = new ErrorEvent('error', { message, error, cancelable: true });
  if (errorListeners.length === 0) {
    loadApi('console.js').console.error(message);
    return;
  }
  for (const listener of errorListeners.slice()) listener.call(globalThis, event);
}

export { ExecutionContext, fetchListeners, errorListeners, listenersOf, removeEventListener, addEventListener,
  reportError };
