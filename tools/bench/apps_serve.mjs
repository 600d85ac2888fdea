#!/usr/bin/env node
// heapprof serve on a bundled framework app under wrk on loopback: short
// phases with a profiling window open and with none, alternating (none first
// in odd pairs, window first in even ones), until the 99 % interval of the
// pairs' slowdown (requests/s with no window over requests/s with one)
// decides against 1.01, or the budget runs out ("undecided after N pairs").
// wrk cycles through the GET requests of the app's requests file.
//   node apps_serve.mjs --heapprof BIN --bundle FILE --requests FILE [--config TOML] [--fetch-handler FILE]
//        [--name NAME] [--seconds S] [--pairs N] [--max-seconds S] [--json FILE]
import { execFile, spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { median, nextLook, summary, verdict } from './paired.mjs';

const run = promisify(execFile);
const opt = { seconds: 1.5, pairs: 60, 'max-seconds': 60, name: 'worker' };
for (let i = 2; i < process.argv.length; i += 2) {
  const key = process.argv[i].replace(/^--/, '');
  if (!process.argv[i].startsWith('--') || process.argv[i + 1] === undefined) {
    console.error(`apps_serve.mjs: bad argument ${process.argv[i]}`);
    process.exit(2);
  }
  opt[key] = process.argv[i + 1];
}
for (const k of ['heapprof', 'bundle', 'requests']) {
  if (!opt[k]) {
    console.error(`usage: apps_serve.mjs --heapprof BIN --bundle FILE --requests FILE [...]: --${k} is missing`);
    process.exit(2);
  }
}
const seconds = Number(opt.seconds), maxPairs = Number(opt.pairs), budget = Number(opt['max-seconds']);
const TARGET = 1.01;

const paths = fs.readFileSync(opt.requests, 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l))
  .filter((r) => (r.method ?? 'GET') === 'GET' && r.body === undefined).map((r) => { const u = new URL(r.url); return u.pathname + u.search; });
if (paths.length === 0) {
  console.error(`apps_serve.mjs: ${opt.requests} has no GET request`);
  process.exit(1);
}
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'apps-serve-'));
const lua = path.join(tmp, 'paths.lua');
fs.writeFileSync(lua, `local paths = ${JSON.stringify(paths).replace(/^\[/, '{').replace(/\]$/, '}')}
local i = 0
request = function() i = i % #paths + 1; return wrk.format("GET", paths[i]) end
`);

const freePort = () => new Promise((resolve) => {
  const s = net.createServer().listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)); });
});
const port = await freePort(), debugPort = await freePort();
const args = ['serve', opt.bundle, '--listen', `127.0.0.1:${port}`, '--debug-listen', `127.0.0.1:${debugPort}`];
if (opt.config) args.push('--config', opt.config);
if (opt['fetch-handler']) args.push('--fetch-handler', opt['fetch-handler']);
const server = spawn(opt.heapprof, args, { stdio: ['ignore', 'ignore', 'pipe'] });
let serverErr = '';
server.stderr.on('data', (d) => { serverErr += d; });
const cleanup = () => { server.kill(); fs.rmSync(tmp, { recursive: true, force: true }); };
process.on('exit', cleanup);
const fail = (what) => { console.error(`apps_serve.mjs: ${what}`); if (serverErr) console.error(serverErr); process.exit(1); };
server.on('exit', (code) => { if (code !== null && code !== 0) fail(`heapprof serve exited ${code}`); });

const base = `http://127.0.0.1:${port}`;
for (let i = 0; ; ++i) {
  try { await fetch(base + paths[0]); break; } catch { if (i > 200) fail(`nothing answers on ${base}`); }
  await new Promise((r) => setTimeout(r, 50));
}

// requests/s and p99 (ms) of one wrk phase.
async function load(s) {
  const { stdout } = await run('wrk', ['-t2', '-c16', `-d${s}s`, '--latency', '-s', lua, base]);
  if (/Socket errors/.test(stdout)) fail(`wrk saw socket errors:\n${stdout}`);
  const rps = Number(/Requests\/sec:\s+([\d.]+)/.exec(stdout)?.[1]);
  const m = /\s99%\s+([\d.]+)(us|ms|s)/.exec(stdout);
  const p99 = m ? Number(m[1]) * { us: 1e-3, ms: 1, s: 1e3 }[m[2]] : NaN;
  if (!(rps > 0)) fail(`could not read wrk's output:\n${stdout}`);
  return { rps, p99 };
}
async function windowPhase() {
  const window = fetch(`http://127.0.0.1:${debugPort}/debug/pprof/heap?seconds=${Math.ceil(seconds + 1)}`)
    .then(async (r) => ({ status: r.status, bytes: (await r.arrayBuffer()).byteLength }));
  await new Promise((r) => setTimeout(r, 300));
  const x = await load(seconds);
  const w = await window;
  if (w.status !== 200 || w.bytes === 0) fail(`the window answered ${w.status} with ${w.bytes} bytes`);
  return x;
}

await load(1);  // warm-up
const started = Date.now();
const none = [], open = [], slowdown = [], p99ratio = [];
let look = 8, stopped = 'budget';
for (let i = 0; i < maxPairs; ++i) {
  let a, b;
  if (i % 2 === 0) { a = await load(seconds); b = await windowPhase(); } else { b = await windowPhase(); a = await load(seconds); }
  none.push(a); open.push(b);
  slowdown.push(a.rps / b.rps);
  p99ratio.push(b.p99 / a.p99);
  if (i + 1 >= look) {
    look = nextLook(i + 1);
    const v = verdict(slowdown, TARGET);
    if (v === 'met' || v === 'not met') { stopped = 'decided'; break; }
  }
  // The budget ends a row only once it has had its first look.
  if (i + 1 >= 8 && (Date.now() - started) / 1000 > budget) break;
}
const out = {
  app: opt.name, seconds, pairs: none.length, stopped, elapsed_s: (Date.now() - started) / 1000, paths: paths.length,
  none_rps: median(none.map((x) => x.rps)), window_rps: median(open.map((x) => x.rps)),
  none_p99_ms: median(none.map((x) => x.p99)), window_p99_ms: median(open.map((x) => x.p99)),
  slowdown: summary(slowdown, TARGET), p99_ratio: summary(p99ratio, Infinity),
};
const s = out.slowdown;
const ci = s.ci ? `, 99 % interval [${s.ci[0].toFixed(3)}, ${s.ci[1].toFixed(3)}]` : '';
console.log(`${out.app}: heapprof serve, wrk -c16 over ${paths.length} paths, ${out.pairs} pairs of ${seconds} s (${stopped}): ` +
  `${out.none_rps.toFixed(0)} req/s no window, ${out.window_rps.toFixed(0)} with one; slowdown median ${s.median.toFixed(3)}${ci}: ` +
  `<= ${TARGET} ${s.verdict}${s.pairs_to_decide ? ` (~${s.pairs_to_decide} pairs would decide it)` : ''}; p99 x${out.p99_ratio.median.toFixed(3)}`);
if (opt.json) fs.writeFileSync(opt.json, JSON.stringify(out, null, 2) + '\n');
server.removeAllListeners('exit');
process.exit(0);  // the exit handler ends heapprof serve
