// What one Durable Object costs: the V8 heap an empty object adds (an object
// that has answered one RPC call and holds nothing), in heapprof's embedded
// runtime and in workerd, both of which keep every object of a namespace in
// the worker's isolate. Measured the same way in both: a run that makes N
// objects and a run that calls one object N times, each followed by a full GC
// and the isolate's used heap; the difference over N is one object.
//   - heapprof run: the profile's heap_used_bytes comment (read at Stop after
//     its full GC; --warmup N, the window is the last 10 requests);
//   - workerd (in-memory storage): HeapProfiler.collectGarbage and
//     Runtime.getHeapUsage through its inspector, as memory_baseline.mjs does.
// Beside it, the heap of an empty worker's whole isolate (memory_baseline.mjs):
// what an isolate of its own per object would cost at the least.
//   node [--experimental-websocket] durable_objects_bench.mjs --heapprof BIN --workerd BIN [--quick] [--json FILE]
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import zlib from 'node:zlib';
import { writeWorkerdConfig } from '../workerd_config.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..', '..');
const { Profile } = createRequire(import.meta.url)(path.join(root, 'tests', 'js', 'node_modules', 'pprof-format'));
const app = path.join(here, 'objects');

const args = process.argv.slice(2);
const opt = name => { const i = args.indexOf(name); return i < 0 ? undefined : args[i + 1]; };
const heapprof = opt('--heapprof'), workerd = opt('--workerd'), jsonOut = opt('--json');
const quick = args.includes('--quick');
if (!heapprof) {
  console.error('usage: durable_objects_bench.mjs --heapprof BIN --workerd BIN [--quick] [--json FILE]');
  process.exit(2);
}
const objects = quick ? 200 : 1000;
const rounds = quick ? 1 : 3;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'heapprof-dobench-'));
const children = [];
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(130));
process.on('exit', () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGTERM');
  fs.rmSync(tmp, { recursive: true, force: true });
});
const median = xs => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)];
const names = many => Array.from({ length: objects }, (_, i) => (many ? `o${i}` : 'one'));

function embeddedRun(many, i) {
  const requests = path.join(tmp, `requests-${many}-${i}.jsonl`);
  const list = [...names(many), ...Array(10).fill('one')];
  fs.writeFileSync(requests, list.map(n => JSON.stringify({ url: `https://objects.example/?o=${n}` })).join('\n') + '\n');
  const out = path.join(tmp, `embedded-${many}-${i}.pb.gz`);
  execFileSync(heapprof, ['run', app, '--requests-file', requests, '--requests', String(list.length), '--warmup',
    String(objects), '--interval', '512KiB', '--top', '0', '-o', out], { stdio: ['ignore', 'ignore', 'pipe'] });
  const p = Profile.decode(zlib.gunzipSync(fs.readFileSync(out)));
  const used = p.comment.map(id => p.stringTable.strings[Number(id)]).find(c => c.startsWith('heap_used_bytes: '));
  if (!used) throw new Error(`no heap_used_bytes comment in ${out}`);
  return Number(used.slice('heap_used_bytes: '.length));
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
      if (m.error) reject(new Error(m.error.message));
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

async function workerdRun(many, i) {
  const dir = path.join(tmp, `workerd-${many}-${i}`);
  const port = await freePort(), inspector = await freePort();
  const config = writeWorkerdConfig(dir, {
    workers: [{ name: 'main', script: path.join(app, 'worker.js'), moduleName: 'worker.js', address: `127.0.0.1:${port}`,
      durableObjects: [{ binding: 'OBJECTS', className: 'Empty', uniqueKey: 'objects-bench-Empty' }] }],
  });
  const log = fs.openSync(path.join(dir, 'workerd.log'), 'w');
  const child = spawn(workerd, ['serve', config, `--inspector-addr=127.0.0.1:${inspector}`], { stdio: ['ignore', log, log] });
  children.push(child);
  try {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    await until('workerd', () => get(port, '/?o=one', agent));
    for (const n of names(many)) {
      const r = await get(port, `/?o=${n}`, agent);
      if (r.status !== 200 || r.body !== '1') throw new Error(`workerd answered ${r.status} ${r.body}`);
    }
    agent.destroy();
    const session = await devtools(inspector);
    const gc = session.call('HeapProfiler.collectGarbage');
    await sleep(100);
    await get(port, '/?o=one');  // workerd runs the GC when it next locks the isolate
    await gc;
    const heap = await session.call('Runtime.getHeapUsage');
    session.close();
    return heap.usedSize;
  } finally {
    child.kill('SIGTERM');
    await new Promise(r => (child.exitCode !== null ? r() : child.once('exit', r)));
  }
}

const perObject = { embedded: [], workerd: [] };
const haveWorkerd = workerd && fs.existsSync(workerd);
for (let i = 0; i < rounds; i++) {
  perObject.embedded.push((embeddedRun(true, i) - embeddedRun(false, i)) / objects);
  if (haveWorkerd) perObject.workerd.push((await workerdRun(true, i) - await workerdRun(false, i)) / objects);
}
const e = median(perObject.embedded), w = haveWorkerd ? median(perObject.workerd) : null;
console.log(`an empty Durable Object's heap (tools/bench/objects), ${objects} objects vs one object called ${objects} times, ` +
  `after a full GC, median of ${rounds} round(s):`);
console.log(`  heapprof run (objects in the worker's isolate): ${e.toFixed(0)} B per object`);
console.log(w === null ? '  workerd: not measured' : `  workerd (objects in the worker's isolate): ${w.toFixed(0)} B per object (ratio ${(e / w).toFixed(2)})`);
if (jsonOut) {
  fs.writeFileSync(jsonOut, JSON.stringify({ objects, rounds, embedded_bytes_per_object: e, workerd_bytes_per_object: w,
    ratio: w === null ? null : e / w, embedded_rounds: perObject.embedded, workerd_rounds: perObject.workerd }, null, 1) + '\n');
}
