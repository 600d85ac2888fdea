// Node 26 only: the ledger strategy (heapprof_node26_ledger.node, forced by
// HEAPPROF_FORCE_LEDGER) against native liveness on the same V8. Their alloc
// totals for the same workload agree within 10 % over >= 1000 samples (in-use
// bytes of what it keeps are printed: 4-15 % apart in runs so far). Each addon runs in its own
// process, so that both see the same fresh heap. At 8 KiB the 64 MiB allocated
// give ~8000 samples per side: a total moves by ~1.1 %, the difference by ~1.6 %,
// so 10 % is ~6 standard deviations (at 32 KiB it was ~3: six runs spread
// 0.1-7.6 %; at 8 KiB 0.0-2.7 %).
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const path = require('node:path');
const { execFileSync } = require('node:child_process');

const ledgerFile = process.env.HEAPPROF_LEDGER_ADDON;
const INTERVAL = 8 * 1024;

const child = `
const heapprof = require(${JSON.stringify(path.resolve(__dirname, '../../heapprof/node'))});
const h = require(${JSON.stringify(path.resolve(__dirname, 'helpers'))});
h.gc();
heapprof.start({ interval: ${INTERVAL} });
const kept = h.retainMemory(16);
h.makeGarbage(48);
const p = h.byFunction(h.decode(heapprof.stop()));
process.stdout.write(JSON.stringify({ strategy: heapprof.strategy(), totals: p.totals,
  kept: p.functions.get('retainMemory').inuse_space, comments: p.comments, n: kept.length }));`;

function run(addon) {
  const env = { ...process.env };
  if (addon) env.HEAPPROF_NODE_ADDON = addon; else delete env.HEAPPROF_NODE_ADDON;
  return JSON.parse(execFileSync(process.execPath, ['-e', child], { env, encoding: 'utf8', timeout: 120000 }));
}

test('ledger on Node 26 agrees with V8 include-collected totals', { skip: !ledgerFile }, () => {
  const l = run(ledgerFile);
  const n = run(null);
  assert.equal(l.strategy, 'gc-prologue-ledger');
  assert.equal(n.strategy, 'native-liveness');
  assert.ok(l.comments.includes('strategy: gc-prologue-ledger'));
  assert.ok(n.comments.includes('strategy: native-liveness'));
  // Expected samples = bytes / interval.
  const samples = (p) => p.totals.alloc_space / INTERVAL;
  assert.ok(samples(l) >= 1000 && samples(n) >= 1000, `enough samples: ${samples(l)}, ${samples(n)}`);
  const off = (a, b) => Math.abs(a - b) / b;
  assert.ok(off(l.totals.alloc_space, n.totals.alloc_space) <= 0.10,
            `alloc_space ledger ${l.totals.alloc_space} vs native ${n.totals.alloc_space}`);
  console.log(`alloc_space ledger ${l.totals.alloc_space} native ${n.totals.alloc_space}; kept ${l.kept} vs ${n.kept}`);
});
