#!/usr/bin/env node
// heapprof beside its Node.js peers: one alloc-heavy workload unprofiled,
// under heapprof (addon), under @datadog/pprof's heap profiler and under
// `node --heap-prof`, interleaved, >= 15 runs each (heapprof twice: with its
// full GC before the in-use snapshot and with gcBeforeSnapshot: false) (--quick: 5 runs of a
// workload half the size). Prints the
// median wall time and peak RSS as ratios to the unprofiled run of the same
// session, the time spent producing the profile and its file size.
// A program that prints numbers, not a test.
//
// usage: node tools/bench/node_peers.mjs [--quick] [--runs N] [--node PATH] [--json FILE]
// env: HEAPPROF_ADDON_DIR (build dir with heapprof_node*.node), default build.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const args = process.argv.slice(2);
const opt = (name, fallback) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] : fallback; };
const runs = Number(opt('--runs', args.includes('--quick') ? 5 : 15));
const nodeBin = opt('--node', process.execPath);
const addonDir = process.env.HEAPPROF_ADDON_DIR || path.join(root, 'build');
const INTERVAL = 512 * 1024;  // every profiler's default mean sampling interval
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'heapprof-node-peers-'));

// The child: the workload, then the profile written to a file. It reports
// its own timings as JSON on stdout; /usr/bin/time gives wall and peak RSS.
const child = `
const mode = process.argv[2], out = process.argv[3];
const t0 = performance.now();
let profiler;
if (mode.startsWith('heapprof')) {
  profiler = require(${JSON.stringify(path.join(root, 'heapprof', 'node'))});
  profiler.start({ interval: ${INTERVAL}, depth: 64, gcBeforeSnapshot: mode === 'heapprof' });
} else if (mode === 'datadog') {
  profiler = require(${JSON.stringify(path.join(root, 'tests', 'js', 'node_modules', '@datadog', 'pprof'))});
  profiler.heap.start(${INTERVAL}, 64);
}
// Alloc-heavy: records built, parsed and mostly dropped; a cache keeps some.
const cache = new Map();
function makeRecord(i) {
  return { id: i, name: 'user-' + i, tags: ['a' + (i % 7), 'b' + (i % 13)], score: i * 1.5 };
}
function roundTrip(r) { return JSON.parse(JSON.stringify(r)); }
function step(i) {
  const r = roundTrip(makeRecord(i));
  if (i % 16 === 0) cache.set(i % 200000, r);
  return r.tags.length;
}
let sink = 0;
for (let i = 0; i < ${args.includes('--quick') ? 400_000 : 800_000}; i++) sink += step(i);
const t1 = performance.now();
let bytes = 0;
if (mode.startsWith('heapprof')) {
  // Written the way the datadog child writes (writeProfile adds an fsync for
  // durability, which is no part of producing the profile).
  const buf = profiler.stop();
  require('fs').writeFileSync(out, buf);
  bytes = buf.length;
} else if (mode === 'datadog') {
  const buf = profiler.encodeSync(profiler.heap.profile());
  profiler.heap.stop();
  require('fs').writeFileSync(out, buf);
  bytes = buf.length;
}
const t2 = performance.now();
process.stdout.write(JSON.stringify({ workMs: t1 - t0, produceMs: t2 - t1, endMs: t2, bytes, sink, cached: cache.size }));
`;
const childFile = path.join(work, 'workload.cjs');
fs.writeFileSync(childFile, child);

function runOnce(mode, i) {
  const out = path.join(work, `${mode}-${i}.out`);
  const flags = [];
  let heapProfDir;
  if (mode === 'heap-prof') {
    heapProfDir = path.join(work, `heap-prof-${i}`);
    flags.push('--heap-prof', `--heap-prof-dir=${heapProfDir}`, `--heap-prof-interval=${INTERVAL}`);
  }
  const timeFile = path.join(work, 'time.txt');
  const r = spawnSync('/usr/bin/time', ['-f', '%e %M', '-o', timeFile, nodeBin, ...flags, childFile, mode, out],
                      { encoding: 'utf8', env: { ...process.env, HEAPPROF_ADDON_DIR: addonDir } });
  if (r.status !== 0) throw new Error(`${mode} run failed: ${r.stderr}`);
  const [wall, rssKb] = fs.readFileSync(timeFile, 'utf8').trim().split(/\s+/).map(Number);
  const rep = JSON.parse(r.stdout);
  let bytes = rep.bytes;
  // node --heap-prof writes at exit: its producing time is what the run spends after the workload.
  let produceMs = rep.produceMs;
  if (mode === 'heap-prof') {
    const f = fs.readdirSync(heapProfDir).find((n) => n.endsWith('.heapprofile'));
    bytes = fs.statSync(path.join(heapProfDir, f)).size;
    fs.rmSync(heapProfDir, { recursive: true, force: true });
  }
  fs.rmSync(out, { force: true });
  return { wallMs: wall * 1000, rssKb, produceMs, afterMs: wall * 1000 - rep.endMs, bytes };
}

// heapprof-nogc: the same addon with gcBeforeSnapshot: false (no full GC
// before the in-use snapshot, so unreachable objects not yet collected count
// as in use, as in @datadog/pprof's profile); its produce time is heapprof's
// own work, the difference to heapprof's is the GC.
const modes = ['none', 'heapprof', 'heapprof-nogc', 'datadog', 'heap-prof'];
const results = Object.fromEntries(modes.map((m) => [m, []]));
runOnce('none', -1);  // warm the file cache
for (let i = 0; i < runs; i++) {
  for (const m of modes) results[m].push(runOnce(m, i));
  process.stderr.write(`run ${i + 1}/${runs}\r`);
}
process.stderr.write('\n');

const median = (xs) => { const s = [...xs].sort((a, b) => a - b); const k = s.length >> 1; return s.length % 2 ? s[k] : (s[k - 1] + s[k]) / 2; };
const base = results.none;
const baseWall = median(base.map((r) => r.wallMs));
const baseRss = median(base.map((r) => r.rssKb));
const baseAfter = median(base.map((r) => r.afterMs));
// Ratios per interleaved pair (run i of a profiler against unprofiled run i).
const pairRatios = (rs, key) => rs.map((r, i) => r[key] / base[i][key]);
const spread = (xs) => ({ median: median(xs), min: Math.min(...xs), max: Math.max(...xs) });
const version = spawnSync(nodeBin, ['--version'], { encoding: 'utf8' }).stdout.trim();
const report = { node: version, runs, interval_bytes: INTERVAL, unprofiled: { wall_ms: baseWall, peak_rss_kb: baseRss } };
console.log(`node ${version}, ${runs} interleaved runs each, interval ${INTERVAL / 1024} KiB`);
console.log(`unprofiled: median wall ${baseWall.toFixed(0)} ms, peak RSS ${(baseRss / 1024).toFixed(1)} MiB`);
console.log('profiler          wall ratio [min-max]      RSS ratio [min-max]   produce ms  file bytes');
for (const m of modes.slice(1)) {
  const rs = results[m];
  const produce = m === 'heap-prof' ? median(rs.map((r) => r.afterMs)) - baseAfter : median(rs.map((r) => r.produceMs));
  const wall = spread(pairRatios(rs, 'wallMs'));
  const rss = spread(pairRatios(rs, 'rssKb'));
  const bytes = median(rs.map((r) => r.bytes));
  report[m] = { wall_ratio: wall, rss_ratio: rss, produce_ms: produce, file_bytes: bytes };
  const cell = (x) => `${x.median.toFixed(3)} [${x.min.toFixed(2)}-${x.max.toFixed(2)}]`;
  console.log(`${m.padEnd(16)}  ${cell(wall).padStart(20)}  ${cell(rss).padStart(20)}` +
              `  ${produce.toFixed(1).padStart(10)}  ${String(bytes).padStart(10)}`);
}
console.log('(heap-prof produce = its extra time after the workload, vs unprofiled; it writes at exit)');
console.log('what in-use means: heapprof = after a full GC (plain gc(), exact: unreachable objects are not counted);');
console.log('  heapprof-nogc and datadog = no GC (objects unreachable but not yet collected count as in use).');
console.log('  Compare produce times like with like: heapprof-nogc vs datadog; heapprof adds the GC, which grows with the live heap.');
const jsonOut = opt('--json', null);
if (jsonOut) fs.writeFileSync(jsonOut, JSON.stringify(report, null, 2) + '\n');
fs.rmSync(work, { recursive: true, force: true });
