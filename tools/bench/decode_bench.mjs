#!/usr/bin/env node
// Reading a profile back: `heapprof top` against `go tool pprof -top` on the
// same file (encode_bench's 10k-location / 100k-sample profile, gzipped as
// heapprof writes it), the two alternating run after run, each its own
// process; wall and CPU (user + system, from /usr/bin/time) per run. The
// verdict is on the CPU ratio heapprof / pprof <= 1, by the 99 % interval of
// the median over the pairs, looked at as paired.mjs's sequential rule does.
//   node decode_bench.mjs --heapprof BIN --profile FILE [--pairs N] [--max-seconds S] [--json FILE]
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { median, nextLook, summary, verdict } from './paired.mjs';

const opt = { pairs: 40, 'max-seconds': 60 };
for (let i = 2; i < process.argv.length; i += 2) {
  if (!process.argv[i].startsWith('--') || process.argv[i + 1] === undefined) {
    console.error(`decode_bench.mjs: bad argument ${process.argv[i]}`);
    process.exit(2);
  }
  opt[process.argv[i].slice(2)] = process.argv[i + 1];
}
if (!opt.heapprof || !opt.profile) {
  console.error('usage: decode_bench.mjs --heapprof BIN --profile FILE [--pairs N] [--max-seconds S] [--json FILE]');
  process.exit(2);
}
const go = (() => { try { return execFileSync('go', ['env', 'GOROOT'], { encoding: 'utf8' }).trim(); } catch { return null; } })();
if (!go) {
  console.error('decode_bench.mjs: no go toolchain (go tool pprof) on PATH');
  process.exit(1);
}
// The pprof binary itself, so `go`'s own start-up is not counted.
const pprof = execFileSync('go', ['tool', '-n', 'pprof'], { encoding: 'utf8' }).trim();
const TARGET = 1;

function timed(cmd, args) {
  const t0 = process.hrtime.bigint();
  const r = spawnSync('/usr/bin/time', ['-f', '%U %S', cmd, ...args], { encoding: 'utf8', maxBuffer: 64 << 20 });
  const wall = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0) {
    console.error(`decode_bench.mjs: ${cmd} ${args.join(' ')} failed (${r.status}):\n${r.stderr}`);
    process.exit(1);
  }
  const [user, sys] = r.stderr.trim().split('\n').pop().split(' ').map(Number);
  return { wall, cpu: (user + sys) * 1000, out: r.stdout };
}
const runHeapprof = () => timed(opt.heapprof, ['top', opt.profile, '-n', '10']);
const runPprof = () => timed(pprof, ['-top', '-nodecount=10', '-symbolize=none', opt.profile]);
// Both read the same file and agree on the top function (a sanity check, not timed).
const first = runHeapprof(), second = runPprof();
const started = Date.now();
const h = [], p = [], cpu = [], wall = [];
let look = 8, stopped = 'budget';
for (let i = 0; i < Number(opt.pairs); ++i) {
  let a, b;
  if (i % 2 === 0) { a = runHeapprof(); b = runPprof(); } else { b = runPprof(); a = runHeapprof(); }
  h.push(a); p.push(b);
  cpu.push(a.cpu / b.cpu);
  wall.push(a.wall / b.wall);
  if (i + 1 >= look) {
    look = nextLook(i + 1);
    const v = verdict(cpu, TARGET);
    if (v === 'met' || v === 'not met') { stopped = 'decided'; break; }
  }
  // The budget ends a row only once it has its first look (8 pairs: the fewest a 99 % interval needs).
  if (i + 1 >= 8 && (Date.now() - started) / 1000 > Number(opt['max-seconds'])) break;
}
const out = {
  profile: opt.profile, bytes: fs.statSync(opt.profile).size, pairs: h.length, stopped,
  heapprof_cpu_ms: median(h.map((x) => x.cpu)), heapprof_wall_ms: median(h.map((x) => x.wall)),
  pprof_cpu_ms: median(p.map((x) => x.cpu)), pprof_wall_ms: median(p.map((x) => x.wall)),
  cpu_ratio: summary(cpu, TARGET), wall_ratio: summary(wall, TARGET),
};
const s = out.cpu_ratio;
console.log(`decode + top of ${opt.profile} (${out.bytes} B): heapprof top ${out.heapprof_cpu_ms.toFixed(0)} ms CPU ` +
  `(${out.heapprof_wall_ms.toFixed(0)} wall), go tool pprof -top ${out.pprof_cpu_ms.toFixed(0)} ms CPU (${out.pprof_wall_ms.toFixed(0)} wall), ` +
  `${out.pairs} pairs (${stopped}); CPU ratio ${s.median.toFixed(3)}` +
  (s.ci ? ` [${s.ci[0].toFixed(3)}, ${s.ci[1].toFixed(3)}]: <= 1 ${s.verdict}` : '') +
  (s.pairs_to_decide ? ` (~${s.pairs_to_decide} pairs would decide it)` : ''));
if (!/\S/.test(first.out) || !/\S/.test(second.out)) console.log('(one of the two printed nothing)');
if (opt.json) fs.writeFileSync(opt.json, JSON.stringify(out, null, 2) + '\n');
