// tools/workerd_config.mjs, the workerd config of the benchmarks and the
// conformance suite: Cap'n Proto escaping, refused specs, and the real workerd
// (HEAPPROF_WORKERD, default .deps/workerd/bin/workerd) accepting a config
// whose names carry quotes, backslashes, newlines, control characters and
// non-ASCII text, in a folder with a space in its path, and serving every
// worker in it: the module name in a stack trace, a proxy-style socket, a
// host-style one, the globalOutbound answering a subrequest and a V8 flag.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { capnpText, workerdConfig, writeWorkerdConfig } from '../../tools/workerd_config.mjs';
import { loopbackListener, spawnWorkerd } from '../../tools/workerd_spawn.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const cli = path.join(root, 'tools', 'workerd_config.mjs');
const workerd = process.env.HEAPPROF_WORKERD || path.join(root, '.deps', 'workerd', 'bin', 'workerd');
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'heapprof workerd "config" '));
const children = [];
after(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  fs.rmSync(tmp, { recursive: true, force: true });
});

test('capnpText escapes as Cap\'n Proto text does', () => {
  assert.equal(capnpText('plain'), '"plain"');
  assert.equal(capnpText('a "b" \\c'), '"a \\"b\\" \\\\c"');
  assert.equal(capnpText('x\ny\tz\r\x01\x7f'), '"x\\ny\\tz\\x0d\\x01\\x7f"');
  assert.equal(capnpText('é ✓ 𝄞'), '"é ✓ 𝄞"');
  assert.throws(() => capnpText(3), /expected a string/);
});

test('bad specs are refused with a message', () => {
  const w = { name: 'a', moduleName: 'a.js', embed: 'a.js', address: '127.0.0.1:1' };
  assert.throws(() => workerdConfig({ workers: [] }), /no worker/);
  assert.throws(() => workerdConfig({ workers: [{ ...w, address: '' }] }), /has no address/);
  assert.throws(() => workerdConfig({ workers: [w, { ...w }] }), /two services are named "a"/);
  assert.throws(() => workerdConfig({ workers: [w], compatibilityDate: '2024-9-1' }), /not YYYY-MM-DD/);
  assert.throws(() => workerdConfig({
    workers: [{ ...w, outbound: { moduleName: 'o.js', embed: 'o.js' } }, { ...w, name: 'a (globalOutbound)' }],
  }), /two services are named/);
  assert.throws(() => writeWorkerdConfig(path.join(tmp, 'none'), {
    workers: [{ name: 'a', script: path.join(tmp, 'missing.js'), address: '127.0.0.1:1' }],
  }), /missing\.js is not a file/);
});

test('the command line writes the config and prints its path; errors exit non-zero', () => {
  const script = path.join(tmp, 'cli-worker.js');
  fs.writeFileSync(script, 'export default { fetch() { return new Response("ok"); } };\n');
  const dir = path.join(tmp, 'cli');
  const ok = spawnSync(process.execPath, [cli, '--dir', dir, '--script', script, '--address', '127.0.0.1:9', '--name', 'n"1'],
    { encoding: 'utf8' });
  assert.equal(ok.status, 0, ok.stderr);
  assert.equal(ok.stdout, path.join(dir, 'workerd.capnp') + '\n');
  const text = fs.readFileSync(path.join(dir, 'workerd.capnp'), 'utf8');
  assert.match(text, /\(name = "n\\"1", worker = \(/);
  assert.match(text, /modules = \[ \(name = "cli-worker.js", esModule = embed "worker-0.js"\) \]/);
  assert.equal(fs.readFileSync(path.join(dir, 'worker-0.js'), 'utf8'), fs.readFileSync(script, 'utf8'));

  const missing = spawnSync(process.execPath, [cli, '--dir', dir, '--address', '127.0.0.1:9'], { encoding: 'utf8' });
  assert.equal(missing.status, 2);
  assert.match(missing.stderr, /--script is required/);
  const unknown = spawnSync(process.execPath, [cli, '--dir', dir, '--bogus'], { encoding: 'utf8' });
  assert.equal(unknown.status, 2);
  assert.match(unknown.stderr, /unexpected "--bogus"/);
  const absent = spawnSync(process.execPath, [cli, '--dir', dir, '--script', path.join(tmp, 'nope.js'), '--address', 'x'],
    { encoding: 'utf8' });
  assert.equal(absent.status, 1);
  assert.match(absent.stderr, /nope\.js is not a file/);
});

// One GET; `target` is the request line's target (a whole URL for a proxy-style socket).
function get(port, target, host) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: target, headers: { host }, agent: false }, res => {
      const chunks = [];
      res.on('data', c => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, body: Buffer.concat(chunks).toString() }));
    });
    req.on('error', reject);
    req.end();
  });
}

test('the real workerd accepts the config and serves every worker in it', { timeout: 60000 }, async () => {
  assert.ok(fs.existsSync(workerd), `no workerd at ${workerd} (tools/bootstrap.sh installs it)`);
  const scripts = path.join(tmp, 'scripts');
  fs.mkdirSync(scripts);
  // The app: its own URL, its subrequest's answer, the stack-trace limit (the
  // V8 flag) and the module name as V8 reports it.
  const app = path.join(scripts, 'app "one".js');
  fs.writeFileSync(app, `export default {
  async fetch(request) {
    const upstream = await fetch('https://upstream.test/ping');
    return Response.json({
      url: request.url, upstream: await upstream.text(), limit: Error.stackTraceLimit, stack: new Error('here').stack,
    });
  },
};
`);
  const handler = path.join(scripts, 'handler.js');
  fs.writeFileSync(handler, 'export default { fetch(request) { return new Response(`outbound saw ${request.url}`); } };\n');
  const plain = path.join(scripts, 'plain.js');
  fs.writeFileSync(plain, 'export default { fetch(request) { return new Response(`plain ${request.url}`); } };\n');

  const [l1, l2] = [await loopbackListener(), await loopbackListener()];
  const [p1, p2] = [l1.port, l2.port];
  const oddName = 'app "one" \\ back\nslash\x01 é';
  const oddModule = 'mod "1" \\ é.js';
  const config = writeWorkerdConfig(path.join(tmp, 'served dir'), {
    workers: [
      { name: oddName, script: app, moduleName: oddModule, address: `127.0.0.1:${p1}`, proxy: true, outbound: handler },
      { name: 'plain', script: plain, address: `127.0.0.1:${p2}` },
    ],
    v8Flags: ['--stack-trace-limit=7'],
  });
  const log = path.join(tmp, 'workerd.log');
  const child = spawnWorkerd(workerd, config, { sockets: { [oddName]: l1, plain: l2 }, log });
  children.push(child);
  const output = () => fs.readFileSync(log, 'utf8');

  async function ask(port, target, host) {
    for (let i = 0; i < 400; i++) {
      if (child.exitCode !== null) assert.fail(`workerd exited (${child.exitCode}):\n${output()}`);
      try { return await get(port, target, host); } catch { await new Promise(r => setTimeout(r, 50)); }
    }
    assert.fail(`workerd did not answer on port ${port} within 20 s:\n${output()}`);
  }

  const one = await ask(p1, 'https://app.test/x?q=1', 'app.test');
  assert.equal(one.status, 200, one.body);
  const got = JSON.parse(one.body);
  assert.equal(got.url, 'https://app.test/x?q=1');
  assert.equal(got.upstream, 'outbound saw https://upstream.test/ping');
  assert.equal(got.limit, 7);
  assert.ok(got.stack.includes(`(${oddModule}:`), got.stack);

  const two = await ask(p2, '/y', 'plain.test');
  assert.equal(two.status, 200, two.body);
  assert.equal(two.body, 'plain http://plain.test/y');
});
