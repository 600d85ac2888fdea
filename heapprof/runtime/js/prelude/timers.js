// Timers on virtual time, queueMicrotask, performance and scheduler.

import { getAsyncFrame, once, setAsyncFrame } from './host.js';
import { illegalConstructor, runtimeToken } from './runtime_token.js';

// Timers on virtual time: a timer fires once microtasks are drained and no
// earlier timer is due; nothing waits for real time to pass. As on the
// platform, performance.now() does not advance while code runs: it moves
// only when a timer fires.
let virtualNow = 0;
let nextTimerId = 0;
const timers = new Map();
function addTimer(callback, delay, args, repeat) {
  if (typeof callback !== 'function') throw new TypeError('a timer callback must be a function');
  const id = ++nextTimerId;
  const ms = Math.max(0, Number(delay) || 0);
  // The AsyncLocalStorage frame it was scheduled in (node:async_hooks) is
  // the one it runs in, as in workerd.
  timers.set(id, { due: virtualNow + ms, callback, args, repeat: repeat ? Math.max(1, ms) : 0, frame: getAsyncFrame() });
  return id;
}
const setTimeout = (callback, delay = 0, ...args) => addTimer(callback, delay, args, false);
const setInterval = (callback, delay = 0, ...args) => addTimer(callback, delay, args, true);
function clearTimeout(id) { timers.delete(id); }
const clearInterval = clearTimeout;
function runNextTimer() {
  let bestId = 0, best = null;
  for (const [id, timer] of timers) if (best === null || timer.due < best.due) { bestId = id; best = timer; }
  if (best === null) return false;
  if (best.repeat) best.due += best.repeat;
  else timers.delete(bestId);
  virtualNow = Math.max(virtualNow, best.due - best.repeat);
  const saved = getAsyncFrame();
  setAsyncFrame(best.frame);
  try {
    best.callback(...best.args);
  } finally {
    setAsyncFrame(saved);
  }
  return true;
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
  timerObjects };
