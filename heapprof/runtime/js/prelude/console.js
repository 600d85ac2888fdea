// console, as V8's (workerd's).

import { natives } from './host.js';
import { virtualNow } from './timers.js';
const { consoleWrite } = natives;

function formatArg(value) {
  if (typeof value === 'string') return value;
  if (value instanceof Error) return value.stack || String(value);
  if (typeof value === 'object' && value !== null) {
    try { return JSON.stringify(value); } catch { return Object.prototype.toString.call(value); }
  }
  return String(value);
}
// The counters and timers of console.count and console.time, by label.
const consoleCounts = new Map();
const consoleTimers = new Map();
let consoleIndent = '';  // console.group's
const consoleLine = (level, args) => consoleWrite(level, consoleIndent + args.map(formatArg).join(' '));
const consoleMethod = level => (...args) => consoleLine(level, args);
// The methods of V8's console (workerd's), with V8's wording; times are the
// runtime's virtual clock (performance.now).
const console = {
  log: consoleMethod('log'), info: consoleMethod('info'), debug: consoleMethod('debug'),
  warn: consoleMethod('warn'), error: consoleMethod('error'),
  dir: consoleMethod('log'), dirxml: consoleMethod('log'), table: consoleMethod('log'),
  trace(...args) { consoleLine('log', ['Trace' + (args.length > 0 ? ': ' + args.map(formatArg).join(' ') : ''), new Error().stack.replace(/^[^\n]*\n/, '')]); },
  assert(condition, ...args) { if (!condition) consoleLine('error', ['Assertion failed' + (args.length > 0 ? ':' : ''), ...args]); },
  count(label = 'default') {
    const n = (consoleCounts.get(String(label)) || 0) + 1;
    consoleCounts.set(String(label), n);
    consoleLine('info', [`${label}: ${n}`]);
  },
  countReset(label = 'default') { consoleCounts.delete(String(label)); },
  time(label = 'default') { consoleTimers.set(String(label), virtualNow); },
  timeLog(label = 'default', ...args) {
    if (!consoleTimers.has(String(label))) { consoleLine('warn', [`Timer '${label}' does not exist`]); return; }
    consoleLine('info', [`${label}: ${virtualNow - consoleTimers.get(String(label))} ms`, ...args]);
  },
  timeEnd(label = 'default') { console.timeLog(label); consoleTimers.delete(String(label)); },
  group(...args) { if (args.length > 0) consoleLine('log', args); consoleIndent += '  '; },
  groupCollapsed(...args) { console.group(...args); },
  groupEnd() { consoleIndent = consoleIndent.slice(2); },
  // What only DevTools shows: nothing to do without an inspector, as in V8.
  clear() {}, profile() {}, profileEnd() {}, timeStamp() {},
};
Object.defineProperty(console, Symbol.toStringTag, { value: 'console', configurable: true });

export { console };
