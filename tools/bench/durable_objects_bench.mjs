// What one Durable Object costs, in heapprof's embedded runtime (each object
// in an isolate of its own) and in workerd (every object of a namespace in
// the worker's one isolate), measured the same way in both: a server
// (`heapprof serve`, `workerd serve`) answers N requests that make N empty
// objects (tools/bench/objects: one RPC call each), and, in a second run, N
// requests to one object; the difference over N is one object:
//   - CPU per object: the server's CPU time (/proc/PID/stat) over the N
//     requests. For heapprof that is making the object's isolate (the
//     runtime, and the worker's module loaded into it for its class) and
//     its first call; for workerd, an object in the existing isolate.
//   - RSS per object: the server's resident memory (/proc/PID/status VmRSS)
//     grown over the N requests.
//   - an empty object's V8 heap: for heapprof its own isolate's heap after a
//     full GC (the heap_used_bytes comment of a 200 ms window on
//     target=OBJECTS:oK of serve's debug listener, median of three objects);
//     for workerd the worker's isolate's heap after a full GC
//     (HeapProfiler.collectGarbage and Runtime.getHeapUsage through its
//     inspector, as memory_baseline.mjs does), N objects against one, over N.
// The median of the rounds is kept (3, or 1 with --quick).
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
      res.on('end', () => {
        const bytes = Buffer.concat(chunks);
        resolve({ status: res.statusCode, bytes, body: bytes.toString() });
      });
    });
    req.on('error', reject);
  });
}
// The server's CPU time (ms) and resident memory (bytes) now.
const ticks = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;
function usage(pid) {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');  // fields from the 3rd (state) on
  const cpu = (Number(fields[11]) + Number(fields[12])) * 1000 / ticks;  // utime + stime
  const rss = Number(/^VmRSS:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) * 1024;
  return { cpu, rss };
}
// N requests over one connection, each answered 1 (ping()), and what they cost the server.
async function drive(port, many, pid) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  await until('the server', () => get(port, '/?o=one', agent));
  const before = usage(pid);
  for (const n of names(many)) {
    const r = await get(port, `/?o=${n}`, agent);
    if (r.status !== 200 || r.body !== '1') throw new Error(`the server answered ${r.status} ${r.body}`);
  }
  const after = usage(pid);
  agent.destroy();
  return { cpu_ms: after.cpu - before.cpu, rss_bytes: after.rss - before.rss };
}
async function stop(child) {
  child.kill('SIGTERM');
  await new Promise(r => (child.exitCode !== null ? r() : child.once('exit', r)));
}

async function embeddedRun(many, i) {
  const port = await freePort(), debugPort = await freePort();
  const log = fs.openSync(path.join(tmp, `serve-${many}-${i}.log`), 'w');
  const child = spawn(heapprof, ['serve', app, '--listen', `127.0.0.1:${port}`, '--debug-listen',
    `127.0.0.1:${debugPort}`, '--interval', '512KiB'], { stdio: ['ignore', log, log] });
  children.push(child);
  try {
    const out = await drive(port, many, child.pid);
    if (many) {
      const heaps = [];
      for (const n of ['o0', 'o1', 'o2']) {
        const r = await get(debugPort, `/debug/pprof/heap?seconds=200ms&target=OBJECTS:${n}`);
        if (r.status !== 200) throw new Error(`a window on OBJECTS:${n} answered ${r.status} ${r.body.slice(0, 200)}`);
        const p = Profile.decode(zlib.gunzipSync(r.bytes));
        const used = p.comment.map(id => p.stringTable.strings[Number(id)]).find(c => c.startsWith('heap_used_bytes: '));
        if (!used) throw new Error(`no heap_used_bytes comment in the window on OBJECTS:${n}`);
        heaps.push(Number(used.slice('heap_used_bytes: '.length)));
      }
      out.heap_bytes = median(heaps);
    }
    return out;
  } finally {
    await stop(child);
  }
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
    const out = await drive(port, many, child.pid);
    const session = await devtools(inspector);
    const gc = session.call('HeapProfiler.collectGarbage');
    await sleep(100);
    await get(port, '/?o=one');  // workerd runs the GC when it next locks the isolate
    await gc;
    out.isolate_heap_bytes = (await session.call('Runtime.getHeapUsage')).usedSize;
    session.close();
    return out;
  } finally {
    await stop(child);
  }
}

// Per object: a run of N objects against a run of one object called N times.
async function perObject(run, i) {
  const many = await run(true, i), one = await run(false, i);
  const out = { cpu_ms: (many.cpu_ms - one.cpu_ms) / objects, rss_bytes: (many.rss_bytes - one.rss_bytes) / objects };
  if (many.heap_bytes !== undefined) out.heap_bytes = many.heap_bytes;
  if (many.isolate_heap_bytes !== undefined) out.heap_bytes = (many.isolate_heap_bytes - one.isolate_heap_bytes) / objects;
  return out;
}
const haveWorkerd = workerd && fs.existsSync(workerd);
const results = { embedded: [], workerd: [] };
for (let i = 0; i < rounds; i++) {
  results.embedded.push(await perObject(embeddedRun, i));
  if (haveWorkerd) results.workerd.push(await perObject(workerdRun, i));
}
const summary = list => (list.length === 0 ? null : {
  cpu_ms: median(list.map(r => r.cpu_ms)), rss_bytes: median(list.map(r => r.rss_bytes)),
  heap_bytes: median(list.map(r => r.heap_bytes)),
});
const e = summary(results.embedded), w = summary(results.workerd);
const kib = b => `${(b / 1024).toFixed(0)} KiB`;
console.log(`one empty Durable Object (tools/bench/objects), ${objects} objects with one call each vs one object ` +
  `called ${objects} times, median of ${rounds} round(s), load ${os.loadavg()[0].toFixed(1)}:`);
console.log(`  heapprof serve (an isolate per object): ${e.cpu_ms.toFixed(2)} ms CPU, ${kib(e.rss_bytes)} RSS, ` +
  `its isolate's heap ${(e.heap_bytes / 1048576).toFixed(2)} MiB after a full GC`);
console.log(w === null ? '  workerd: not measured'
  : `  workerd (every object in the worker's isolate): ${w.cpu_ms.toFixed(2)} ms CPU, ${kib(w.rss_bytes)} RSS, ` +
    `${w.heap_bytes.toFixed(0)} B of the isolate's heap after a full GC`);
if (jsonOut) {
  fs.writeFileSync(jsonOut, JSON.stringify({
    objects, rounds, load: os.loadavg(),
    embedded_cpu_ms_per_object: e.cpu_ms, embedded_rss_bytes_per_object: e.rss_bytes, embedded_heap_bytes_per_object: e.heap_bytes,
    workerd_cpu_ms_per_object: w?.cpu_ms ?? null, workerd_rss_bytes_per_object: w?.rss_bytes ?? null,
    workerd_heap_bytes_per_object: w?.heap_bytes ?? null,
    embedded_rounds: results.embedded, workerd_rounds: results.workerd,
  }, null, 1) + '\n');
}
