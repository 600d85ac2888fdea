// The addon's leak session (heapprof.leaks) on the running Node: an LRU cache
// and a leak that hold about the same bytes, as tests/cli/leaks_run_test.sh
// gives them to `heapprof run --leaks`. The leak is growing, the cache is
// not; the profile's in-use samples carry the age label; misuse throws.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const heapprof = require('../../heapprof/node');
const h = require('./helpers');

// Node inlines keepForever and cacheEntry into request() once hot, and then
// charges their allocations to it: the sites are named by where they
// allocate only with inlining off (heapprof attach switches it off the same way).
require('node:v8').setFlagsFromString('--no-turbo-inlining');
require('node:v8').setFlagsFromString('--max-inlined-bytecode-size=0');

const capacity = 6000;
const cache = new Map();
let leaked = null;  // a linked list: growing it allocates in keepForever only
let n = 0;

function cacheEntry(key) {
  return { key, payload: new Array(128).fill(key) };
}

function remember(key) {
  cache.set(key, cacheEntry(key));
  if (cache.size > capacity) cache.delete(cache.keys().next().value);
}

function keepForever(id) {
  leaked = { id, payload: new Array(128).fill(id), next: leaked };
}

// One "request": the cache turns over four entries, the leak keeps one.
function request() {
  for (let k = 0; k < 4; k++) remember(n++);
  keepForever(n);
}

const verdictOf = (report, fn) => {
  const site = report.sites.find((s) => s.frames.length && s.frames[0].function === fn);
  return site ? site.verdict : 'absent';
};

test('leaks: the leak is growing and the LRU cache of the same bytes is not', () => {
  for (let k = 0; k < capacity; k++) remember(n++);  // the cache is full before the session
  try {
    session();
  } finally {
    if (heapprof.leaks.isRunning()) heapprof.leaks.stop();
    leaked = null;
    cache.clear();
  }
});

function session() {
  const started = heapprof.leaks.start({ interval: 32 * 1024, cadence: 0 });
  assert.equal(started.cadence, 0);
  assert.ok(started.firstSnapshotMs > 0);
  assert.ok(heapprof.leaks.isRunning());
  // 12400 requests, a snapshot every 200 of them (as the CLI test's 10 ms cadence gives about).
  for (let i = 1; i <= 12400; i++) {
    request();
    if (i % 200 === 0) heapprof.leaks.snapshot();
  }
  const report = heapprof.leaks.report();
  assert.equal(report.session.snapshots, 63);
  assert.ok(report.sites.length > 0);
  const leak = verdictOf(report, 'keepForever');
  const lru = verdictOf(report, 'cacheEntry');
  assert.equal(leak, 'growing', report.text);
  assert.ok(lru !== 'growing' && lru !== 'absent', `the cache's verdict is ${lru}\n${report.text}`);
  const live = (fn) => report.sites.filter((s) => s.frames.length && s.frames[0].function === fn)
    .reduce((a, s) => a + s.live_bytes, 0);
  const a = live('keepForever');
  const b = live('cacheEntry');
  assert.ok(a > 0 && b > 0 && a / b < 3 && b / a < 3, `about the same bytes: leak ${a}, cache ${b}`);
  assert.match(report.text, /keepForever/);
  assert.ok(report.projection, 'the report has a projection');

  // The last snapshot as a profile: in-use only, every sample with its age.
  const file = path.join(h.work, 'leaks.pb.gz');
  assert.ok(heapprof.leaks.writeProfile(file) > 0);
  const profile = h.decode(fs.readFileSync(file));
  const str = (i) => profile.stringTable.strings[Number(i)];
  const types = profile.sampleType.map((t) => str(t.type));
  assert.ok(types.includes('inuse_space'), types.join(', '));
  assert.ok(profile.sample.length > 0);
  for (const s of profile.sample) {
    assert.ok(s.label.some((l) => str(l.key) === 'age'), 'every sample carries an age label');
  }
  const { functions } = h.byFunction(profile);
  assert.ok(functions.has('keepForever') && functions.has('cacheEntry'), [...functions.keys()].join(', '));
  heapprof.leaks.stop();
  assert.equal(heapprof.leaks.isRunning(), false);
}

test('leaks: misuse throws with what to do', () => {
  assert.throws(() => heapprof.leaks.report(), /no leak session is running; call leaks.start\(\) first/);
  assert.throws(() => heapprof.leaks.snapshot(), /no leak session is running/);
  assert.throws(() => heapprof.leaks.start({ cadence: -5 }), /cadence is milliseconds/);
  heapprof.leaks.start({ cadence: 0 });
  try {
    assert.throws(() => heapprof.leaks.start({ cadence: 0 }), /a leak session is already running/);
    assert.throws(() => heapprof.start(), /a leak session is running and holds V8's sampler/);
    assert.throws(() => heapprof.leaks.report(), /1 snapshot so far; a growth report needs two/);
  } finally {
    heapprof.leaks.stop();
  }
  heapprof.start();
  try {
    assert.throws(() => heapprof.leaks.start({ cadence: 0 }), /a profile window is running/);
  } finally {
    heapprof.stop();
  }
});

test('leaks: the timer takes snapshots at the cadence and does not keep the process alive', async () => {
  heapprof.leaks.start({ cadence: 20 });
  try {
    const until = Date.now() + 2000;
    let report = null;
    while (Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      try {
        report = heapprof.leaks.report();
        if (report.session.snapshots >= 4) break;
      } catch (err) {
        if (!/so far; a growth report needs two/.test(err.message)) throw err;
      }
    }
    assert.ok(report && report.session.snapshots >= 4, `snapshots taken by the timer: ${report && report.session.snapshots}`);
  } finally {
    heapprof.leaks.stop();
  }
});
