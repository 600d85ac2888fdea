// Several heapprof addons in one node process: two copies of the package in
// one app's node_modules (each with its own addon file), and on Node 26 the
// native-liveness and ledger builds side by side. Each loads, profiles, and
// reports the other's window as a busy sampler instead of aborting.
// Extra env: HEAPPROF_LEDGER_ADDON (Node 26's ledger build, when present).
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const fs = require('node:fs');
const path = require('node:path');
const { execFileSync } = require('node:child_process');
const heapprof = require('../../heapprof/node');
const h = require('./helpers');

const MIB = 1024 * 1024;
const packageDir = path.resolve(__dirname, '../../heapprof/node');

// node_modules/<name>/ with the package's files and this Node's addon beside index.js.
function installCopy(app, name) {
  const dir = path.join(app, 'node_modules', name);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  for (const file of ['index.js', 'package.json']) fs.copyFileSync(path.join(packageDir, file), path.join(dir, file));
  const addon = heapprof.addonPath();
  fs.copyFileSync(addon, path.join(dir, path.basename(addon)));
  return dir;
}

test('two copies of the package in one process: each loads its own addon and profiles', () => {
  const app = path.join(h.work, `app-${process.versions.modules}`);
  installCopy(app, 'heapprof-a');
  installCopy(app, 'heapprof-b');
  const outA = path.join(app, 'a.pb.gz');
  const outB = path.join(app, 'b.pb.gz');
  const script = `
    const assert = require('node:assert/strict');
    const a = require('heapprof-a');
    const b = require('heapprof-b');
    assert.notEqual(a.addonPath(), b.addonPath());
    const chunk = (i) => new Array(128).fill(i & 0xff);
    function keptByCopyA() { const k = []; for (let i = 0; i < 8192; i++) k.push(chunk(i)); return k; }
    function keptByCopyB() { const k = []; for (let i = 0; i < 8192; i++) k.push(chunk(i)); return k; }
    a.start({ interval: 16384 });
    assert.throws(() => b.start(), /heapprof: the sampler is busy/);
    const keepA = keptByCopyA();
    a.writeProfile(${JSON.stringify(outA)});
    b.start({ interval: 16384 });
    assert.throws(() => a.start(), /heapprof: the sampler is busy/);
    const keepB = keptByCopyB();
    b.writeProfile(${JSON.stringify(outB)});
    console.log(keepA.length + keepB.length);`;
  const env = { ...process.env };
  delete env.HEAPPROF_ADDON_DIR;
  delete env.HEAPPROF_NODE_ADDON;
  fs.rmSync(outA, { force: true });
  fs.rmSync(outB, { force: true });
  const out = execFileSync(process.execPath, ['-e', script], { cwd: app, env, encoding: 'utf8', timeout: 120000 });
  assert.equal(out.trim(), '16384');
  for (const [file, mine, other] of [[outA, 'keptByCopyA', 'keptByCopyB'], [outB, 'keptByCopyB', 'keptByCopyA']]) {
    const { functions } = h.byFunction(h.decode(fs.readFileSync(file)));
    const kept = functions.get(mine);
    assert.ok(kept && kept.inuse_space > 6 * MIB, `${path.basename(file)}: ${mine} holds ~8 MiB: ${kept && kept.inuse_space}`);
    assert.ok(!functions.has(other), `${path.basename(file)} saw only its own window`);
  }
});

const ledgerAddon = process.env.HEAPPROF_LEDGER_ADDON;
test('native-liveness and ledger addons in one process, each profiling',
  { skip: ledgerAddon ? false : 'no second build for this Node (Node 26 only)' }, () => {
    const ledger = heapprof.load(ledgerAddon);
    assert.equal(heapprof.strategy(), 'native-liveness');
    assert.equal(ledger.strategy(), 'gc-prologue-ledger');
    for (const [api, strategy] of [[heapprof, 'native-liveness'], [ledger, 'gc-prologue-ledger'], [heapprof, 'native-liveness']]) {
      h.gc();
      api.start({ interval: 16384 });
      const kept = h.retainMemory(8);
      h.makeGarbage(8);
      const { functions, comments } = h.byFunction(h.decode(api.stop()));
      assert.ok(kept.length > 0);
      assert.ok(comments.includes(`strategy: ${strategy}`), comments.join(' | '));
      const keep = functions.get('retainMemory');
      const junk = functions.get('makeGarbage');
      assert.ok(keep && keep.inuse_space > 6 * MIB, `${strategy}: retainMemory holds ~8 MiB: ${keep && keep.inuse_space}`);
      assert.ok(junk && junk.alloc_space > 6 * MIB && junk.inuse_space < MIB,
        `${strategy}: makeGarbage allocated ~8 MiB and keeps nothing: ${JSON.stringify(junk)}`);
    }
  });
