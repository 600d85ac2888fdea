// Node 26 only: the ledger strategy (heapprof_node26_ledger.node, forced by
// HEAPPROF_FORCE_LEDGER) against native liveness on the same V8. Their alloc
// totals for the same workload agree within 10 % over >= 1000 samples, as do
// the in-use totals of what the workload keeps.
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const heapprof = require('../../heapprof/node');
const h = require('./helpers');

const ledgerFile = process.env.HEAPPROF_LEDGER_ADDON;
const INTERVAL = 32 * 1024;

function run(api) {
  h.gc();
  api.start({ interval: INTERVAL });
  const kept = h.retainMemory(16);
  h.makeGarbage(48);
  const buf = api.stop();
  assert.ok(kept.length > 0);
  return h.byFunction(h.decode(buf));
}

test('ledger on Node 26 agrees with V8 include-collected totals', { skip: !ledgerFile }, () => {
  const ledger = heapprof.load(ledgerFile);
  assert.equal(ledger.strategy(), 'gc-prologue-ledger');
  assert.equal(heapprof.strategy(), 'native-liveness');
  const l = run(ledger);
  const n = run(heapprof);
  // Expected samples = bytes / interval.
  const samples = (p) => p.totals.alloc_space / INTERVAL;
  assert.ok(samples(l) >= 1000 && samples(n) >= 1000, `enough samples: ${samples(l)}, ${samples(n)}`);
  const off = (a, b) => Math.abs(a - b) / b;
  assert.ok(off(l.totals.alloc_space, n.totals.alloc_space) <= 0.10,
            `alloc_space ledger ${l.totals.alloc_space} vs native ${n.totals.alloc_space}`);
  const lk = l.functions.get('retainMemory').inuse_space;
  const nk = n.functions.get('retainMemory').inuse_space;
  assert.ok(off(lk, nk) <= 0.10, `retainMemory inuse_space ledger ${lk} vs native ${nk}`);
  assert.ok(l.comments.includes('strategy: gc-prologue-ledger'));
  assert.ok(n.comments.includes('strategy: native-liveness'));
});
