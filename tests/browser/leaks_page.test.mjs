// heapprof serve --leaks in a real browser (headless Chromium via
// playwright-core): two replicas of a worker holding an LRU cache and a leak
// of about the same bytes (tests/cli/data/leaks/lru-and-leak.js) serve real
// HTTP traffic; the debug listener's leak page shows keepForever growing and
// the cache not, draws each top site's live bytes over the session, and a
// token scoped to one replica sees that replica's verdicts only (JSON, page
// and index). At SIGTERM serve prints each replica's report and writes its
// JSON. The snapshots' pause and the verdicts' p-values are printed, never
// asserted against the clock.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { once } from 'node:events';

const require = createRequire(new URL('../js/package.json', import.meta.url));
const { chromium } = require('playwright-core');

const cli = process.env.HEAPPROF_CLI;
const CHROMIUM = process.env.HEAPPROF_CHROMIUM || '/usr/bin/chromium';
const worker = new URL('../cli/data/leaks/lru-and-leak.js', import.meta.url).pathname;
const artifacts = process.env.HEAPPROF_ARTIFACTS || fs.mkdtempSync(path.join(os.tmpdir(), 'heapprof-leaks-'));
const ALL = 'all-targets-secret-0123456789';
const ZERO = 'replica-zero-secret-0123456789';

let serve;
let stdout = '';
let stderr = '';
let base;
let debug;
let context;
let userDataDir;

// Resolves when serve has printed both addresses.
function started() {
  return new Promise((resolve, reject) => {
    const check = () => {
      const b = stdout.match(/^heapprof serve: .* on (http:\/\/[0-9.:]+)\/ \(/m);
      const d = stdout.match(/^heapprof serve: profiles on (http:\/\/[0-9.:]+)\/debug\/pprof\//m);
      if (b && d && /a leak session on every replica/.test(stdout)) resolve([b[1], d[1]]);
    };
    serve.stdout.on('data', (c) => { stdout += c; check(); });
    serve.stderr.on('data', (c) => { stderr += c; });
    serve.on('exit', (code) => reject(new Error(`heapprof serve exited (${code}) before listening: ${stderr}`)));
  });
}

// `n` requests to a replica (by its /@N/ prefix), `parallel` at a time.
async function traffic(replica, n, parallel = 4) {
  let next = 0;
  const one = async () => {
    while (next < n) {
      next += 1;
      const r = await fetch(`${base}/@${replica}/item`);
      assert.equal(r.status, 200);
      await r.arrayBuffer();
    }
  };
  await Promise.all(Array.from({ length: parallel }, one));
}

const get = (url, token) => fetch(url, { headers: token ? { Authorization: `Bearer ${token}` } : {} });
const leafIs = (name) => (s) => s.frames.length > 0 && s.frames[0].function === name;

before(async () => {
  assert.ok(cli, 'HEAPPROF_CLI must name the heapprof executable (set by CTest)');
  fs.mkdirSync(artifacts, { recursive: true });
  const tokens = path.join(artifacts, 'tokens.txt');
  fs.writeFileSync(tokens, `all ${ALL} *\nzero ${ZERO} lru-and-leak-0\n`);
  serve = spawn(cli, ['serve', worker, '--leaks', '--cadence', '200ms', '--replicas', '2', '--listen', '127.0.0.1:0',
    '--debug-listen', '127.0.0.1:0', '--debug-token-file', tokens, '--leaks-json', path.join(artifacts, 'final.json')],
  { stdio: ['ignore', 'pipe', 'pipe'] });
  [base, debug] = await started();
  // The leak session began as the replicas loaded: the traffic fills it.
  // Replica 0 gets 6400 requests (its cache of 6000 entries, 4 misses a
  // request, turns over after 1500), replica 1 a few.
  await Promise.all([traffic(0, 6400), traffic(1, 200, 1)]);
  userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'heapprof-chromium-'));
  context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1280, height: 900 },
    extraHTTPHeaders: { Authorization: `Bearer ${ZERO}` },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
});

after(async () => {
  if (context) await context.close();
  if (userDataDir) fs.rmSync(userDataDir, { recursive: true, force: true });
  if (serve && serve.exitCode === null) serve.kill('SIGKILL');
});

test('JSON: the leak is growing, the cache is not, with its rate and projection', async () => {
  const r = await get(`${debug}/debug/heapprof/leaks?target=0`, ZERO);
  assert.equal(r.status, 200, await r.clone().text());
  assert.match(r.headers.get('content-type'), /application\/json/);
  const report = await r.json();
  assert.equal(report.target, 'lru-and-leak-0');
  const leak = report.sites.find(leafIs('keepForever'));
  const cache = report.sites.filter(leafIs('cacheEntry'));
  assert.ok(leak, `no keepForever site: ${report.sites.map((s) => s.name).join(', ')}`);
  console.log(`keepForever ${leak.verdict} (late p = ${leak.late.p_value.toExponential(2)}, ` +
    `${(leak.whole.per_1000_requests / 1024).toFixed(0)} KiB per 1000 requests); cacheEntry ` +
    `${cache.map((s) => `${s.verdict} (whole p = ${s.whole.p_value.toExponential(2)}, late p = ` +
      `${s.late.p_value.toExponential(2)})`).join(', ')}; look ${report.look} at alpha ${report.alpha_per_test.toExponential(2)}`);
  console.log(`session: ${report.session.snapshots} snapshots, one every ${report.session.cadence_seconds} s; ` +
    `the slowest paused the replica ${report.session.snapshot_ms_max.toFixed(1)} ms, ` +
    `${report.session.snapshot_ms_total.toFixed(0)} ms in all (${(100 * report.session.paused_share).toFixed(1)} %)`);
  assert.equal(leak.verdict, 'growing');
  assert.ok(cache.length > 0, 'no cacheEntry site');
  for (const s of cache) assert.notEqual(s.verdict, 'growing', `a cache site is growing: ${s.stack}`);
  assert.ok(leak.whole.per_1000_requests > 0 && leak.whole.per_minute > 0);
  assert.ok(leak.series.length >= 3 && leak.series.at(-1) > leak.series[0], 'the live series of the leak rises');
  assert.ok(report.requests > 0 && report.projection.text.length > 0);
  assert.ok(report.session.snapshots >= 3 && report.session.snapshot_ms_max > 0);
  // Every read is a look of the session: the next one is tested at a smaller alpha.
  const again = await (await get(`${debug}/debug/heapprof/leaks?target=lru-and-leak-0`, ZERO)).json();
  assert.equal(again.look, report.look + 1);
  assert.ok(again.alpha < report.alpha);
});

test('tokens: a token scoped to one replica sees no other replica\'s verdicts', async () => {
  assert.equal((await get(`${debug}/debug/heapprof/leaks?target=0`)).status, 401);
  assert.equal((await get(`${debug}/debug/heapprof/leaks?target=0`, 'not-a-token-at-all-0123')).status, 401);
  for (const t of ['1', 'lru-and-leak-1']) {
    assert.equal((await get(`${debug}/debug/heapprof/leaks?target=${t}`, ZERO)).status, 403);
    assert.equal((await get(`${debug}/debug/heapprof/leaks.html?target=${t}`, ZERO)).status, 403);
  }
  // Its only target is the default; the all-targets token must name one.
  assert.equal((await (await get(`${debug}/debug/heapprof/leaks`, ZERO)).json()).target, 'lru-and-leak-0');
  assert.equal((await get(`${debug}/debug/heapprof/leaks`, ALL)).status, 400);
  const other = await get(`${debug}/debug/heapprof/leaks?target=1`, ALL);
  assert.equal(other.status, 200);
  assert.equal((await other.json()).target, 'lru-and-leak-1');
  // The index links the page of each target the token may see, and no other.
  const index = await (await get(`${debug}/debug/pprof/`, ZERO)).text();
  assert.match(index, /leaks\.html\?target=lru-and-leak-0/);
  assert.doesNotMatch(index, /lru-and-leak-1/);
  assert.match(await (await get(`${debug}/debug/pprof/`, ALL)).text(), /leaks\.html\?target=lru-and-leak-1/);
});

test('page: verdicts per site and live bytes over time, drawn in Chromium', async () => {
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  const response = await page.goto(`${debug}/debug/heapprof/leaks.html?target=0`);
  assert.equal(response.status(), 200);
  assert.match(await page.title(), /lru-and-leak-0/);
  const rows = await page.$$eval('tr.site', (trs) => trs.map((tr) => ({
    fn: tr.dataset.function, verdict: tr.dataset.verdict, text: tr.innerText,
  })));
  const leak = rows.find((r) => r.fn === 'keepForever');
  assert.ok(leak, `no row for keepForever: ${JSON.stringify(rows)}`);
  assert.equal(leak.verdict, 'growing');
  assert.match(leak.text, /growing/);
  assert.match(leak.text, /lru-and-leak\.js:\d+/);
  const cache = rows.filter((r) => r.fn === 'cacheEntry');
  assert.ok(cache.length > 0);
  for (const r of cache) assert.notEqual(r.verdict, 'growing');
  // Growing rows come first.
  assert.equal(rows[0].verdict, 'growing');
  assert.match(await page.locator('#projection').innerText(), /heap used .* of the .* limit/);
  assert.match(await page.locator('#session').innerText(), /live snapshots over/);
  // The chart: the leak's line is drawn, it rises (SVG y grows downwards), and it is red.
  const line = page.locator('#chart polyline[data-function="keepForever"]').first();
  const box = await line.boundingBox();
  assert.ok(box && box.width > 100 && box.height > 10, `the leak's line is drawn: ${JSON.stringify(box)}`);
  const ys = (await line.getAttribute('points')).split(' ').map((p) => Number(p.split(',')[1]));
  assert.ok(ys.at(-1) < ys[0], 'the leak\'s line rises');
  assert.equal(await line.getAttribute('stroke'), '#c62828');
  await page.screenshot({ path: path.join(artifacts, 'leaks.png'), fullPage: true });
  assert.deepEqual(errors, []);
  await page.close();
});

test('SIGTERM: each replica\'s report printed and its JSON written, exit 0', async () => {
  serve.kill('SIGTERM');
  const [code] = await once(serve, 'exit');
  assert.equal(code, 0, stderr);
  assert.match(stdout, /Leak session on lru-and-leak-0: \d+ snapshots, the slowest paused it [\d.]+ ms/);
  assert.match(stdout, /growing .* keepForever \(lru-and-leak\.js:\d+\)/);
  for (const name of ['lru-and-leak-0', 'lru-and-leak-1']) {
    const file = path.join(artifacts, `final-${name}.json`);
    const report = JSON.parse(fs.readFileSync(file, 'utf8'));
    assert.equal(report.target, name);
  }
  // (The replica idled since the traffic ended: its leak, one entry a request, may have stopped growing by now.)
  const final = JSON.parse(fs.readFileSync(path.join(artifacts, 'final-lru-and-leak-0.json'), 'utf8'));
  assert.ok(['growing', 'bounded'].includes(final.sites.find(leafIs('keepForever')).verdict));
});
