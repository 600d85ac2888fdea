// Timers on virtual time, queueMicrotask, performance and scheduler.

import { getAsyncFrame, once, setAsyncFrame } from './host.js';
import { illegalConstructor, runtimeToken } from './runtime_token.js';

// Timers on virtual time: a timer fires once microtasks are drained and no
// earlier timer is due; nothing waits for real time to pass. As on the
// platform, performance.now() does not advance while code runs: it moves
// only when a timer fires.
let virtualNow = 0;
let nextTimerId = 0;
const { apply } = Reflect;  // the worker may replace Reflect; the runtime keeps its own

// Whose timers are being made, as in workerd, where a timer belongs to the
// IoContext of the code that set it (docs/runtime.md, "Lifetimes"):
// - outside every event (the module's top level) there is none, and setting
//   or clearing a timer throws workerd's error;
// - a request's timers end with the request: endRequest() cancels those still
//   pending once its response and waitUntil promises are done;
// - a Durable Object's timers live as long as the object (workerd keeps one
//   IoContext for an actor across its requests).
const GLOBAL_SCOPE = -1, OBJECT_SCOPE = 0;
let currentOwner = GLOBAL_SCOPE;
let lastRequest = OBJECT_SCOPE;
const globalScopeMessage = 'Disallowed operation called within global scope. Asynchronous I/O ' +
  '(ex: fetch() or connect()), setting a timeout, and generating random values are not allowed within global ' +
  'scope. To fix this error, perform this operation within a handler. ' +
  'https://developers.cloudflare.com/workers/runtime-apis/handlers/';
function requireHandler() {
  if (currentOwner === GLOBAL_SCOPE) throw new Error(globalScopeMessage);
}

// The pending timers: a binary min-heap on (due, id), so the earliest due
// fires first and ties fire in the order they were set, found in O(log n) a
// fire with no allocation; an interval's record is reused, keeping its id
// (and so its place among ties). Each record knows its index in the heap,
// so clearTimeout removes it in O(log n) too, without tombstones.
const heap = [];
const timers = new Map();  // id -> record, for clearTimeout
const earlier = (a, b) => a.due < b.due || (a.due === b.due && a.id < b.id);
function place(timer, index) {
  heap[index] = timer;
  timer.index = index;
}
function siftUp(index) {
  const timer = heap[index];
  while (index > 0) {
    const parent = (index - 1) >> 1;
    if (!earlier(timer, heap[parent])) break;
    place(heap[parent], index);
    index = parent;
  }
  place(timer, index);
}
function siftDown(index) {
  const timer = heap[index], n = heap.length;
  for (;;) {
    let child = 2 * index + 1;
    if (child >= n) break;
    if (child + 1 < n && earlier(heap[child + 1], heap[child])) child++;
    if (!earlier(heap[child], timer)) break;
    place(heap[child], index);
    index = child;
  }
  place(timer, index);
}
function removeAt(index) {
  const last = heap.pop();
  if (index < heap.length) {
    place(last, index);
    siftDown(index);
    siftUp(last.index);
  }
}
function forget(timer) {
  timers.delete(timer.id);
  timer.index = -1;
  // Nothing of the timer's stays reachable through a record someone still holds.
  timer.callback = timer.args = timer.frame = null;
}

function addTimer(callback, delay, args, repeat) {
  requireHandler();
  if (typeof callback !== 'function') throw new TypeError('a timer callback must be a function');
  const id = ++nextTimerId;
  const ms = Math.max(0, Number(delay) || 0);
  // The AsyncLocalStorage frame it was scheduled in (node:async_hooks) is
  // the one it runs in, as in workerd.
  const timer = {
    due: virtualNow + ms, id, index: heap.length, owner: currentOwner, callback, args,
    repeat: repeat ? Math.max(1, ms) : 0, frame: getAsyncFrame(),
  };
  timers.set(id, timer);
  heap.push(timer);
  siftUp(timer.index);
  return id;
}
const setTimeout = (callback, delay = 0, ...args) => addTimer(callback, delay, args, false);
const setInterval = (callback, delay = 0, ...args) => addTimer(callback, delay, args, true);
function clearTimeout(id) {
  requireHandler();
  const timer = timers.get(id);
  if (timer === undefined) return;
  removeAt(timer.index);
  forget(timer);
}
const clearInterval = clearTimeout;
function runNextTimer() {
  if (heap.length === 0) return false;
  const timer = heap[0];
  const { callback, args, frame } = timer;
  virtualNow = Math.max(virtualNow, timer.due);
  if (timer.repeat) {
    // Rescheduled before it runs, so its callback may clear it.
    timer.due += timer.repeat;
    siftDown(0);
  } else {
    removeAt(0);
    forget(timer);
  }
  const saved = getAsyncFrame();
  setAsyncFrame(frame);
  try {
    apply(callback, globalThis, args);  // workerd calls a timer's callback on the global object
  } finally {
    setAsyncFrame(saved);
  }
  return true;
}

// The host's calls around what it runs: a request (Handle in
// worker_runtime.cpp), whose timers end with it, and an event of a Durable
// Object (durableObjectEvent), whose timers stay with the object.
function beginRequest() {
  // A request that ended in a termination (the time limit) could not run
  // endRequest(); its timers go now, before they could fire in this one.
  dropRequestTimers();
  currentOwner = ++lastRequest;
}
// Cancels the request's pending timers: its callbacks, and what they hold,
// are garbage from here on, as in workerd when the request's IoContext goes.
function endRequest() {
  dropRequestTimers();
  currentOwner = GLOBAL_SCOPE;
}
// One pass over the heap. Requests run one at a time, so every request's
// timer pending here is the one request's: the pass costs what it set.
function dropRequestTimers() {
  let kept = 0;
  for (let i = 0; i < heap.length; i++) {
    const timer = heap[i];
    if (timer.owner !== OBJECT_SCOPE) forget(timer);
    else place(timer, kept++);
  }
  if (kept === heap.length) return;
  heap.length = kept;
  for (let i = (kept >> 1) - 1; i >= 0; i--) siftDown(i);
}
function beginObjectEvent() {
  currentOwner = OBJECT_SCOPE;
}

const queueMicrotask = callback => { Promise.resolve().then(callback); };
// performance and scheduler as workerd has them: an instance of a class a
// worker never sees as a global, made at the first read of either global.
const timerObjects = once(() => {
  class Performance {
    constructor(token) { illegalConstructor(token); }
    get timeOrigin() { return 0; }
    now() { return virtualNow; }
  }
  class Scheduler {
    constructor(token) { illegalConstructor(token); }
    wait(ms) { return new Promise(resolve => setTimeout(resolve, ms)); }
  }
  return { performance: new Performance(runtimeToken), scheduler: new Scheduler(runtimeToken) };
});

export { virtualNow, addTimer, setTimeout, setInterval, clearTimeout, clearInterval, runNextTimer, queueMicrotask,
  timerObjects, beginRequest, endRequest, beginObjectEvent };
