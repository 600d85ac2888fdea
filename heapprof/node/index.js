'use strict';
// heapprof for Node.js: sampling heap profiles (alloc_* and inuse_*) as
// gzipped pprof. Loads the native addon built for this Node's ABI.
const crypto = require('crypto');
const fs = require('fs');
const path = require('path');
const v8 = require('v8');
const vm = require('vm');

// ABI (process.versions.modules) -> addon file built by CMake.
const ADDONS = { 115: 'heapprof_node20.node', 147: 'heapprof_node26.node' };

function addonPath() {
  if (process.env.HEAPPROF_NODE_ADDON) return path.resolve(process.env.HEAPPROF_NODE_ADDON);
  const abi = process.versions.modules;
  const file = ADDONS[abi];
  if (!file) {
    throw new Error(`heapprof: no addon for Node ${process.version} (ABI ${abi}); ` +
                    `supported: Node 20 and Node 26`);
  }
  const dirs = process.env.HEAPPROF_ADDON_DIR
    ? [process.env.HEAPPROF_ADDON_DIR]
    : [__dirname, path.join(__dirname, '..', '..', 'build'), path.join(__dirname, '..', '..', 'build-node')];
  for (const dir of dirs) {
    const candidate = path.resolve(dir, file);
    if (fs.existsSync(candidate)) return candidate;
  }
  throw new Error(`heapprof: ${file} not found in ${dirs.join(', ')}; ` +
                  'build it with CMake and set HEAPPROF_ADDON_DIR to the build directory');
}

// Writes through a temporary file made with O_EXCL under a random name in
// the target's folder (rename() stays on one filesystem), fsynced, renamed.
function writeFileAtomic(file, bytes) {
  const dir = path.dirname(file);
  let tmp;
  let fd;
  for (let attempt = 0; fd === undefined; ++attempt) {
    tmp = path.join(dir, `.${path.basename(file)}.tmp-${crypto.randomBytes(12).toString('hex')}`);
    try {
      fd = fs.openSync(tmp, 'wx', 0o644);
    } catch (err) {
      if (err.code !== 'EEXIST' || attempt >= 8) throw err;
    }
  }
  try {
    for (let off = 0; off < bytes.length;) off += fs.writeSync(fd, bytes, off, bytes.length - off);
    fs.fsyncSync(fd);
    fs.closeSync(fd);
    fd = undefined;
    fs.renameSync(tmp, file);
  } catch (err) {
    if (fd !== undefined) fs.closeSync(fd);
    fs.rmSync(tmp, { force: true });
    throw err;
  }
}

// The GC before the in-use snapshot. Without --expose-gc an addon can only
// ask V8 for a memory-reducing GC (a critical memory-pressure notification),
// which costs 2-2.5x a plain full GC on small heaps and finds the same
// garbage. The plain one is the gc() that --expose-gc installs in new
// contexts: the flag is switched on just long enough to create one context
// and take its gc, then back off, so the process's own contexts stay as they
// were. A process that runs with --expose-gc already lends its gc; one that
// names it (--expose-gc-as) is left alone: null, and the addon falls back.
let plainGc;
function plainFullGc() {
  if (plainGc !== undefined) return plainGc;
  if (typeof globalThis.gc === 'function') return (plainGc = globalThis.gc);
  const flags = process.execArgv.concat((process.env.NODE_OPTIONS || '').split(/\s+/));
  if (flags.some((f) => /^--expose[-_]gc[-_]as/.test(f))) return (plainGc = null);
  // V8 shows the flag only through what a new context gets.
  if (vm.runInNewContext('typeof gc') === 'function') return (plainGc = vm.runInNewContext('gc'));
  v8.setFlagsFromString('--expose-gc');
  try {
    plainGc = vm.runInNewContext('gc');
  } finally {
    v8.setFlagsFromString('--no-expose-gc');
  }
  return plainGc;
}

// The JS API over one loaded addon.
function bind(native) {
  function start(options = {}) {
    if (options === null || typeof options !== 'object') {
      throw new TypeError('heapprof: start() takes an options object');
    }
    const { interval, depth, gcBeforeSnapshot } = options;
    native.start(interval, depth, gcBeforeSnapshot, gcBeforeSnapshot === false ? undefined : plainFullGc());
  }

  function stop() {
    return native.stop();
  }

  function profile(fn, options) {
    if (typeof fn !== 'function') throw new TypeError('heapprof: profile() needs a function');
    start(options);
    let result;
    try {
      result = fn();
    } catch (err) {
      if (native.isRunning()) native.stop();
      throw err;
    }
    if (result && typeof result.then === 'function') {
      return Promise.resolve(result).then(
        () => native.stop(),
        (err) => { if (native.isRunning()) native.stop(); throw err; });
    }
    return native.stop();
  }

  // Stops the window and writes the profile atomically: an exclusive temporary
  // file with an unpredictable name beside `file` (O_EXCL, so a symbolic link
  // planted there is never followed), then a rename. When the write fails the
  // profile is not lost: the error carries it as `err.profile` (a Buffer).
  function writeProfile(file) {
    if (typeof file !== 'string' || file === '') {
      throw new TypeError('heapprof: writeProfile() needs a file path');
    }
    const bytes = native.stop();
    try {
      writeFileAtomic(file, bytes);
    } catch (err) {
      const failure = new Error(`heapprof: cannot write ${file}: ${err.message} (the profile is in this error's ` +
                                '.profile)', { cause: err });
      failure.profile = bytes;
      throw failure;
    }
    return bytes.length;
  }

  // Arms a one-shot capture: when the heap nears its limit, the running
  // window is closed and its profile written to `file`.
  function onHeapLimit(file) {
    native.onHeapLimit(file);
  }

  return {
    start, stop, profile, writeProfile, onHeapLimit,
    isRunning: () => native.isRunning(),
    strategy: () => native.strategy(),
    leaks: bindLeaks(native),
  };
}

// A leak session: one sampler that runs until stop(), a live snapshot (after
// a full GC) every `cadence` ms on a timer that does not keep the process
// alive, and on demand a growth report per allocation site (verdicts growing
// / bounded / steady / unclear, rates with their 95 % intervals, the time to
// the heap limit) and the last snapshot's in-use profile with an age label.
function bindLeaks(native) {
  let timer = null;
  let failure = null;
  function clear() {
    if (timer !== null) clearInterval(timer);
    timer = null;
  }
  function start(options = {}) {
    if (options === null || typeof options !== 'object') {
      throw new TypeError('heapprof: leaks.start() takes an options object');
    }
    const { interval, depth, gcBeforeSnapshot, cadence } = options;
    if (cadence !== undefined && cadence !== 0 && !(Number.isFinite(cadence) && cadence >= 1)) {
      throw new TypeError('heapprof: leaks.start(): cadence is milliseconds between snapshots (>= 1), or 0 for ' +
                          'none (snapshots by leaks.snapshot() only)');
    }
    native.leaksStart(interval, depth, gcBeforeSnapshot, gcBeforeSnapshot === false ? undefined : plainFullGc());
    failure = null;
    const cost = native.leaksSnapshot();
    // Without a cadence: 100 x the first snapshot's cost, between 1 s and 60 s (as heapprof run --leaks).
    const every = cadence === undefined ? Math.min(60000, Math.max(1000, Math.ceil(cost * 100))) : cadence;
    if (every > 0) {
      timer = setInterval(() => {
        try {
          native.leaksSnapshot();
        } catch (err) {
          failure = err;
          clear();
        }
      }, every);
      timer.unref();
    }
    return { cadence: every, firstSnapshotMs: cost };
  }
  function check() {
    if (failure !== null) throw failure;
  }
  function snapshot() {
    check();
    return native.leaksSnapshot();
  }
  function report() {
    check();
    const [json, text] = native.leaksReport();
    const out = JSON.parse(json);
    Object.defineProperty(out, 'text', { value: text, enumerable: false });
    return out;
  }
  function profile() {
    check();
    return native.leaksProfile();
  }
  function writeProfile(file) {
    if (typeof file !== 'string' || file === '') {
      throw new TypeError('heapprof: leaks.writeProfile() needs a file path');
    }
    const bytes = profile();
    writeFileAtomic(file, bytes);
    return bytes.length;
  }
  function stop() {
    clear();
    native.leaksStop();
  }
  return { start, snapshot, report, profile, writeProfile, stop, isRunning: () => native.leaksRunning() };
}

let api = null;
function get() {
  if (api === null) api = bind(require(addonPath()));
  return api;
}

module.exports = {
  start: (o) => get().start(o),
  stop: () => get().stop(),
  profile: (fn, o) => get().profile(fn, o),
  writeProfile: (f) => get().writeProfile(f),
  onHeapLimit: (f) => get().onHeapLimit(f),
  isRunning: () => get().isRunning(),
  strategy: () => get().strategy(),
  leaks: {
    start: (o) => get().leaks.start(o),
    snapshot: () => get().leaks.snapshot(),
    report: () => get().leaks.report(),
    profile: () => get().leaks.profile(),
    writeProfile: (f) => get().leaks.writeProfile(f),
    stop: () => get().leaks.stop(),
    isRunning: () => get().leaks.isRunning(),
  },
  addonPath,
  // The same API over an explicit addon file (e.g. heapprof_node26_ledger.node).
  load: (file) => bind(require(path.resolve(file))),
};
