// The memory baseline of an empty worker (tools/bench/empty-worker.js): V8
// heap used after a warm-up and a full GC, in heapprof's embedded runtime
// (what `heapprof run` reports) and in workerd (what production counts
// against the 128 MB limit), and their ratio. Both are measured the same way:
// N requests, then a full GC, then the isolate's used heap.
//   - heapprof run: the profile's heap_used_bytes comment, read at Stop after
//     its full GC (`--requests N+10 --warmup N`: the window is the last 10),
//     with the request workerd gets from Node's client (GET / of
//     http://127.0.0.1:PORT/, Host and Connection: keep-alive), so that the
//     two runtimes answer the same requests; and, for reference, with
//     heapprof run's synthetic stream (12 countries' cf objects, varied
//     headers), which workerd is not given;
//   - workerd: N requests over HTTP, then through its inspector
//     HeapProfiler.collectGarbage (carried out when the next request locks the
//     isolate, so one more is sent) and Runtime.getHeapUsage (DevTools
//     protocol, Node's built-in WebSocket).
// The median of the rounds is kept: 3 of heapprof run (its number repeats
// to the byte), 15 of workerd, whose empty worker reads one of a few values
// 15-17 KB apart from process to process (2026-12-03: 246,808, 248,032 or
// 263,272 B), so that its median is not one draw of three; the smallest is
// printed too. With --quick, one round each.
//   node [--experimental-websocket] memory_baseline.mjs --heapprof BIN --workerd BIN [--quick] [--json FILE]
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import zlib from 'node:zlib';
import { writeWorkerdConfig } from '../workerd_config.mjs';
import { loopbackListener, spawnWorkerd } from '../workerd_spawn.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..', '..');
const { Profile } = createRequire(import.meta.url)(path.join(root, 'tests', 'js', 'node_modules', 'pprof-format'));
const worker = path.join(here, 'empty-worker.js');

const args = process.argv.slice(2);
const opt = name => { const i = args.indexOf(name); return i < 0 ? undefined : args[i + 1]; };
const heapprof = opt('--heapprof'), workerd = opt('--workerd'), jsonOut = opt('--json');
const quick = args.includes('--quick');
if (!heapprof) {
  console.error('usage: memory_baseline.mjs --heapprof BIN --workerd BIN [--quick] [--json FILE]');
  process.exit(2);
}
const warmup = 1000;
const rounds = quick ? 1 : 3, workerdRounds = quick ? 1 : 15;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'heapprof-membase-'));
const children = [];
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(130));
process.on('exit', () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGTERM');
  fs.rmSync(tmp, { recursive: true, force: true });
});

const median = xs => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
const mib = bytes => (bytes / 1048576).toFixed(2) + ' MiB';

// heapprof run: the used heap recorded in the profile's comments. `request`
// is the arguments of the one request to repeat ([] for the synthetic stream).
const workerdRequest = ['--url', 'http://127.0.0.1:8787/', '--header', 'Connection: keep-alive'];
function embeddedRound(i, request = workerdRequest) {
  const out = path.join(tmp, `embedded-${i}.pb.gz`);
  execFileSync(heapprof, ['run', worker, '--requests', String(warmup + 10), '--warmup', String(warmup),
    '--interval', '512KiB', '--top', '0', ...request, '-o', out], { stdio: ['ignore', 'ignore', 'pipe'] });
  const p = Profile.decode(zlib.gunzipSync(fs.readFileSync(out)));
  const comments = p.comment.map(id => p.stringTable.strings[Number(id)]);
  const used = comments.find(c => c.startsWith('heap_used_bytes: '));
  const v8 = comments.find(c => c.startsWith('v8: '));
  if (!used) throw new Error(`no heap_used_bytes comment in ${out}`);
  return { used: Number(used.slice('heap_used_bytes: '.length)), v8: v8 ? v8.slice(4) : '?' };
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => { const { port } = s.address(); s.close(() => resolve(port)); });
  });
}
const sleep = ms => new Promise(r => setTimeout(r, ms));
function get(port, pathname, agent) {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: pathname, agent }, res => {
      const chunks = [];
      res.on('data', c => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, body: Buffer.concat(chunks).toString() }));
    });
    req.on('error', reject);
  });
}
async function until(what, fn) {
  for (let i = 0; i < 400; i++) {
    try { return await fn(); } catch { await sleep(50); }
  }
  throw new Error(`${what} did not answer within 20 s`);
}

// One DevTools session: call(method) resolves with the result.
async function devtools(port) {
  const targets = JSON.parse((await until('workerd\'s inspector', () => get(port, '/json/list'))).body);
  if (!targets.length) throw new Error('workerd\'s inspector lists no target');
  const ws = new WebSocket(targets[0].webSocketDebuggerUrl);
  await new Promise((resolve, reject) => { ws.onopen = resolve; ws.onerror = () => reject(new Error('cannot open the inspector\'s WebSocket')); });
  let next = 0;
  const waiting = new Map();
  ws.onmessage = event => {
    const m = JSON.parse(event.data);
    if (m.id !== undefined && waiting.has(m.id)) {
      const { resolve, reject } = waiting.get(m.id);
      waiting.delete(m.id);
      if (m.error) reject(new Error(`${m.error.message}`));
      else resolve(m.result);
    }
  };
  const call = (method, params = {}) => new Promise((resolve, reject) => {
    const id = ++next;
    const timer = setTimeout(() => reject(new Error(`${method}: no answer within 30 s`)), 30000);
    waiting.set(id, { resolve: v => { clearTimeout(timer); resolve(v); }, reject: e => { clearTimeout(timer); reject(e); } });
    ws.send(JSON.stringify({ id, method, params }));
  });
  return { call, close: () => ws.close() };
}

// workerd: a fresh process per round, N requests, then GC and the used heap.
async function workerdRound(i) {
  const dir = path.join(tmp, `workerd-${i}`);
  // The worker's socket listens before workerd starts (no port can be taken in between);
  // the inspector's port is found free.
  const listener = await loopbackListener(), port = listener.port, inspector = await freePort();
  const config = writeWorkerdConfig(dir, {
    workers: [{ name: 'main', script: worker, moduleName: 'worker.js', address: `127.0.0.1:${port}` }],
  });
  const child = spawnWorkerd(workerd, config, { sockets: { main: listener },
    args: [`--inspector-addr=127.0.0.1:${inspector}`], log: path.join(dir, 'workerd.log') });
  children.push(child);
  try {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    await until('workerd', () => get(port, '/', agent));
    for (let n = 1; n < warmup; n++) {
      const r = await get(port, '/', agent);
      if (r.status !== 200 || r.body !== 'ok') throw new Error(`workerd answered ${r.status} ${r.body}`);
    }
    agent.destroy();
    const session = await devtools(inspector);
    // workerd runs the GC when it next locks the isolate: one more request does.
    const gc = session.call('HeapProfiler.collectGarbage');
    await sleep(100);
    await get(port, '/');
    await gc;
    const heap = await session.call('Runtime.getHeapUsage');
    session.close();
    return { used: heap.usedSize };
  } finally {
    child.kill('SIGTERM');
    await new Promise(r => (child.exitCode !== null ? r() : child.once('exit', r)));
  }
}

const embedded = [], real = [];
let v8 = '?';
for (let i = 0; i < rounds; i++) {
  const e = embeddedRound(i);
  embedded.push(e.used);
  v8 = e.v8;
}
const synthetic = embeddedRound('synthetic', []).used;
for (let i = 0; i < workerdRounds && workerd && fs.existsSync(workerd); i++) real.push((await workerdRound(i)).used);
const e = median(embedded), w = real.length ? median(real) : null;
let workerdVersion = '?';
try { workerdVersion = execFileSync(workerd, ['--version'], { encoding: 'utf8' }).trim(); } catch {}
const bytes = n => n.toLocaleString('en-US') + ' B';
const smallest = real.length ? Math.min(...real) : null;
console.log(`empty worker (tools/bench/empty-worker.js), V8 heap used after ${warmup} requests and a full GC, ` +
  `median of ${rounds} round(s) here and ${real.length} of workerd:`);
const labels = [`heapprof run (embedded, V8 ${v8})`, workerdVersion];
const width = Math.max(...labels.map(l => l.length)) + 1;
const line = (label, value, all) =>
  console.log(`  ${(label + ':').padEnd(width)} ${bytes(value).padStart(11)}   [${[...all].sort((a, b) => a - b).map(bytes).join(', ')}]`);
line(labels[0], e, embedded);
console.log(`  (heapprof run under its synthetic stream instead of workerd's request: ${bytes(synthetic)})`);
if (w !== null) {
  line(labels[1], w, real);
  console.log(`  heapprof run / workerd: x${(e / w).toFixed(3)} of its median (${mib(e - w)} more), ` +
    `x${(e / smallest).toFixed(3)} of its smallest; of a 128 MiB limit the runtime itself takes ` +
    `${(100 * e / 134217728).toFixed(2)} % here, ${(100 * w / 134217728).toFixed(2)} % in workerd`);
} else {
  console.log('  (no workerd binary: its baseline is not measured)');
}
if (jsonOut) {
  fs.writeFileSync(jsonOut, JSON.stringify({
    requests: warmup, rounds, embedded_used_bytes: e, embedded_rounds: embedded, embedded_v8: v8,
    embedded_synthetic_bytes: synthetic,
    workerd_used_bytes: w, workerd_rounds: real, workerd_min_bytes: smallest, workerd_version: workerdVersion,
    ratio: w === null ? null : e / w, ratio_to_min: w === null ? null : e / smallest,
  }) + '\n');
}
