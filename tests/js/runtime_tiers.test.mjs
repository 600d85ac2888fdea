// The embedded runtime runs a worker's JavaScript in the tiers workerd does:
// no baseline (Sparkplug) code. workerd is the oracle: one probe worker calls
// a small function 20 times a request and reports V8's optimization status of
// it at the 10th request, in each runtime with its default flags, with
// --always-sparkplug and with --no-sparkplug. The status bit that means
// "baseline code" differs between V8 versions, so it is found per runtime:
// the bits --always-sparkplug sets that --no-sparkplug does not. The
// optimizing compilers are off in every run (their concurrent jobs would
// make the other bits depend on timing); workerd does not baseline-compile
// with them on either (docs/performance.md).
//   HEAPPROF=build/heapprof [HEAPPROF_WORKERD=...] node --test runtime_tiers.test.mjs
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { writeWorkerdConfig } from '../../tools/workerd_config.mjs';
import { loopbackListener, spawnWorkerd } from '../../tools/workerd_spawn.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const heapprof = process.env.HEAPPROF || path.join(root, 'build', 'heapprof');
const workerd = process.env.HEAPPROF_WORKERD || path.join(root, '.deps', 'workerd', 'bin', 'workerd');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'heapprof-tiers-'));
const children = [];
after(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  fs.rmSync(tmp, { recursive: true, force: true });
});

const probe = path.join(tmp, 'probe.js');
fs.writeFileSync(probe, `function warm(a, b) { let s = 0; for (let i = 0; i < 3; i++) s += (a * i) ^ b; return s; }
let n = 0, served = 0;
export default {
  async fetch() {
    for (let i = 0; i < 20; i++) n += warm(i, n & 7);
    const status = String(%GetOptimizationStatus(warm) >>> 0);
    if (++served === 10) console.log('tier status ' + status);
    return new Response(status);
  },
};
`);

// The status at the 10th request under heapprof run with these V8 flags.
function embeddedStatus(flags) {
  const out = path.join(tmp, 'probe.pb.gz');
  const args = ['run', probe, '--requests', '10', '--warmup', '1', '--top', '0', '-o', out,
    '--v8-flag=--allow-natives-syntax', '--v8-flag=--no-opt', ...flags.map(f => `--v8-flag=${f}`)];
  const r = spawnSync(heapprof, args, { encoding: 'utf8' });
  assert.equal(r.status, 0, `heapprof ${args.join(' ')} failed:\n${r.stderr}`);
  const m = /tier status (\d+)/.exec(r.stdout + r.stderr);
  assert.ok(m, `no status line from heapprof run:\n${r.stdout}\n${r.stderr}`);
  return Number(m[1]);
}

function get(port) {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: '/', agent: false }, res => {
      const chunks = [];
      res.on('data', c => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, body: Buffer.concat(chunks).toString() }));
    });
    req.on('error', reject);
  });
}

// The status at the 10th request served by workerd with these V8 flags.
async function workerdStatus(flags) {
  const listener = await loopbackListener();
  const port = listener.port;
  const dir = fs.mkdtempSync(path.join(tmp, 'workerd-'));
  const config = writeWorkerdConfig(dir, {
    workers: [{ name: 'probe', script: probe, address: `127.0.0.1:${port}` }],
    v8Flags: ['--allow-natives-syntax', '--no-maglev', '--no-turbofan', ...flags],
  });
  const log = path.join(dir, 'workerd.log');
  const child = spawnWorkerd(workerd, config, { sockets: { probe: listener }, log });
  children.push(child);
  try {
    let first = null;
    for (let i = 0; i < 400 && first === null; i++) {
      if (child.exitCode !== null) assert.fail(`workerd exited (${child.exitCode}):\n${fs.readFileSync(log, 'utf8')}`);
      try { first = await get(port); } catch { await new Promise(r => setTimeout(r, 50)); }
    }
    assert.ok(first, `workerd did not answer within 20 s:\n${fs.readFileSync(log, 'utf8')}`);
    let last = first;
    for (let i = 1; i < 10; i++) last = await get(port);
    assert.equal(last.status, 200, last.body);
    return Number(last.body);
  } finally {
    child.kill('SIGTERM');
  }
}

// The bits that mean baseline code in this runtime's V8.
function baselineBits(always, none) {
  const bits = (always & ~none) >>> 0;
  assert.notEqual(bits, 0, `--always-sparkplug (${always}) sets no bit that --no-sparkplug (${none}) lacks`);
  return bits;
}

test('workerd runs the probe without baseline code and so does heapprof run by default', { timeout: 120000 }, async () => {
  assert.ok(fs.existsSync(workerd), `no workerd at ${workerd} (tools/bootstrap.sh installs it)`);
  const theirs = baselineBits(await workerdStatus(['--always-sparkplug']), await workerdStatus(['--no-sparkplug']));
  const workerdDefault = await workerdStatus([]);
  assert.equal(workerdDefault & theirs, 0,
    `workerd now baseline-compiles (status ${workerdDefault}): WorkerRuntimeV8Flags should follow it`);

  const ours = baselineBits(embeddedStatus(['--always-sparkplug']), embeddedStatus(['--no-sparkplug']));
  const embeddedDefault = embeddedStatus([]);
  assert.equal(embeddedDefault & ours, 0, `heapprof run baseline-compiled the probe (status ${embeddedDefault})`);
  // The user's --v8-flag comes after the runtime's own and wins.
  const overridden = embeddedStatus(['--sparkplug']);
  assert.notEqual(overridden & ours, 0, `--v8-flag=--sparkplug did not turn Sparkplug on (status ${overridden})`);
});
