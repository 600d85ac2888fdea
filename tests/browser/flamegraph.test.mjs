// The flamegraph page in a real browser (headless Chromium via playwright-core):
// frames drawn in proportion, zoom, sample-type switch, search, table, diff
// colours. Screenshots go to $HEAPPROF_ARTIFACTS; the 50k-frame render time is
// printed, never asserted.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const require = createRequire(new URL('../js/package.json', import.meta.url));
const { chromium } = require('playwright-core');

const tool = process.env.HEAPPROF_PAGES_TOOL;
const artifacts = process.env.HEAPPROF_ARTIFACTS || fs.mkdtempSync(path.join(os.tmpdir(), 'heapprof-flame-'));
const CHROMIUM = process.env.HEAPPROF_CHROMIUM || '/usr/bin/chromium';
const MiB = 1024 * 1024;

let context;
let userDataDir;

before(async () => {
  assert.ok(tool, 'HEAPPROF_PAGES_TOOL must name the page generator (set by CTest)');
  fs.mkdirSync(artifacts, { recursive: true });
  execFileSync(tool, [artifacts], { stdio: 'inherit' });
  userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'heapprof-chromium-'));
  context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1280, height: 720 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
});

after(async () => {
  if (context) await context.close();
  if (userDataDir) fs.rmSync(userDataDir, { recursive: true, force: true });
});

// Opens a generated page; records every request and every script error.
async function open(name) {
  const page = await context.newPage();
  const requests = [];
  const errors = [];
  page.on('request', (r) => requests.push(r.url()));
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  await page.goto(pathToFileURL(path.join(artifacts, name)).href);
  await page.waitForFunction(() => window.heapprof !== undefined);
  return { page, requests, errors };
}

const frames = (page) => page.evaluate(() => window.heapprof.frames());
const state = (page) => page.evaluate(() => window.heapprof.state());
const byName = (list, name) => {
  const found = list.filter((f) => f.name === name && f.kind !== 'merged');
  assert.equal(found.length, 1, `exactly one frame named ${name}: ${JSON.stringify(list.map((f) => f.name))}`);
  return found[0];
};

// Clicks the middle of a laid-out frame on the canvas.
async function clickFrame(page, frame) {
  const box = await page.locator('#flame').boundingBox();
  await page.mouse.click(box.x + frame.x + frame.w / 2, box.y + frame.y + frame.h / 2);
}

// The canvas pixel at the middle of a frame (device pixels).
async function pixelAt(page, frame) {
  return page.evaluate(({ x, y }) => {
    const c = document.getElementById('flame');
    const dpr = window.devicePixelRatio || 1;
    return Array.from(c.getContext('2d').getImageData(Math.round(x * dpr), Math.round(y * dpr), 1, 1).data);
  }, { x: frame.x + frame.w / 2, y: frame.y + 3 });
}

test('known profile: frames drawn with the right proportions, zoom, switch, search, table', async () => {
  const { page, requests, errors } = await open('known.html');

  // Starts on the profile's default sample type.
  assert.equal((await state(page)).sampleType, 'inuse_space');
  let list = await frames(page);
  assert.deepEqual(list.map((f) => f.name).sort(), ['all', 'handle', 'leak', 'main']);

  await page.click('#types button[data-type="alloc_space"]');
  assert.equal((await state(page)).sampleType, 'alloc_space');
  list = await frames(page);
  const width = (await state(page)).canvasWidth;
  const [all, main, handle, leak, parse] = ['all', 'main', 'handle', 'leak', 'parse'].map((n) => byName(list, n));
  assert.equal(all.w, width);
  assert.equal(main.w, width);
  assert.ok(Math.abs(handle.w / width - 0.9) < 1e-9, `handle is 90 %: ${handle.w / width}`);
  assert.ok(Math.abs(leak.w / width - 0.6) < 1e-9, `leak is 60 %: ${leak.w / width}`);
  assert.ok(Math.abs(parse.w / width - 0.3) < 1e-9, `parse is 30 %: ${parse.w / width}`);
  assert.equal(leak.total, 6 * MiB);
  assert.equal(parse.total, 3 * MiB);
  // Widest child first; siblings side by side; flame: callees above callers.
  assert.equal(leak.x, handle.x);
  assert.ok(Math.abs(parse.x - (leak.x + leak.w)) < 1e-9);
  assert.ok(leak.y < handle.y && handle.y < main.y && main.y < all.y);
  // The frames are really painted: the canvas is not blank where they are.
  for (const f of [leak, parse, handle]) {
    const px = await pixelAt(page, f);
    assert.equal(px[3], 255, `${f.name} painted`);
  }
  assert.notDeepEqual(await pixelAt(page, leak), await pixelAt(page, parse));

  // Hover: tooltip with function, file:line, total and self.
  const box = await page.locator('#flame').boundingBox();
  await page.mouse.move(box.x + leak.x + leak.w / 2, box.y + leak.y + 8);
  const tip = await page.locator('#tooltip').innerText();
  assert.match(tip, /leak/);
  assert.match(tip, /app\.js:\d+/);
  assert.match(tip, /Total\s+6\.00 MiB \(60\.0%\)/);
  assert.match(tip, /Self\s+6\.00 MiB \(60\.0%\)/);
  await page.screenshot({ path: path.join(artifacts, 'flamegraph.png') });

  // Click to zoom into handle: it fills the width, its children rescale.
  await clickFrame(page, handle);
  let s = await state(page);
  assert.equal(s.zoomName, 'handle');
  list = await frames(page);
  assert.equal(byName(list, 'handle').w, width);
  assert.ok(Math.abs(byName(list, 'leak').w / width - 6 / 9) < 1e-9);
  assert.ok(Math.abs(byName(list, 'parse').w / width - 3 / 9) < 1e-9);
  assert.equal(byName(list, 'main').kind, 'ancestor');
  await page.screenshot({ path: path.join(artifacts, 'flamegraph-zoomed.png') });
  // And back out with the reset button.
  await page.click('#reset-zoom');
  assert.equal((await state(page)).zoom, 0);
  // Clicking an ancestor zooms out to it.
  await clickFrame(page, byName(await frames(page), 'leak'));
  assert.equal((await state(page)).zoomName, 'leak');
  await clickFrame(page, byName(await frames(page), 'main'));
  assert.equal((await state(page)).zoomName, 'main');
  await page.keyboard.press('Escape');
  assert.equal((await state(page)).zoom, 0);

  // Sample type switch: by objects, parse dominates (48 of 55).
  await page.click('#types button[data-type="alloc_objects"]');
  list = await frames(page);
  assert.ok(Math.abs(byName(list, 'parse').w / width - 48 / 55) < 1e-9);
  assert.ok(byName(list, 'parse').x < byName(list, 'leak').x);
  await page.click('#types button[data-type="inuse_space"]');
  list = await frames(page);
  assert.equal(list.filter((f) => f.name === 'parse').length, 0);
  assert.ok(Math.abs(byName(list, 'leak').w - width) < 1e-9);

  // Icicle: root on top.
  await page.click('#orient button[data-orient="icicle"]');
  list = await frames(page);
  assert.ok(byName(list, 'all').y < byName(list, 'leak').y);
  await page.click('#orient button[data-orient="flame"]');

  // Search highlights matching frames and shows their share.
  await page.click('#types button[data-type="alloc_space"]');
  await page.fill('#search', 'pars');
  list = await frames(page);
  assert.deepEqual(list.filter((f) => f.highlighted).map((f) => f.name), ['parse']);
  const match = await page.locator('#match').innerText();
  assert.match(match, /3\.00 MiB \(30\.0%\)/);
  // A pattern matching nested frames counts each sample once.
  await page.fill('#search', 'handle|leak');
  assert.match(await page.locator('#match').innerText(), /9\.00 MiB \(90\.0%\)/);
  await page.fill('#search', '');
  assert.equal(await page.locator('#match').isVisible(), false);

  // Table: functions by flat, then by cum; a row click highlights in the graph.
  await page.click('#views button[data-view="table"]');
  assert.equal(await page.locator('#table-view').isVisible(), true);
  const firstRow = async () => (await page.locator('#table-body tr').first().innerText()).split('\t').map((c) => c.trim());
  let row = await firstRow();
  assert.equal(row[4], 'leak');
  assert.equal(row[0], '6.00 MiB');
  assert.equal(row[1], '60.0%');
  assert.equal(await page.locator('#table-body tr').count(), 4);  // main, handle, leak, parse
  await page.screenshot({ path: path.join(artifacts, 'flamegraph-table.png') });
  await page.click('#table-head th[data-key="cum"]');
  row = await firstRow();
  assert.ok(['main'].includes(row[4]), `first by cum: ${row}`);
  assert.equal(row[2], '10.0 MiB');
  await page.click('#table-body tr[data-fn] >> text=parse');
  s = await state(page);
  assert.equal(s.view, 'graph');
  assert.equal(s.picked, 'parse');
  list = await frames(page);
  assert.deepEqual(list.filter((f) => f.highlighted).map((f) => f.name), ['parse']);

  assert.deepEqual(errors, []);
  assert.deepEqual(requests.filter((u) => !u.startsWith('file:')), [], 'the page fetches nothing');
  await page.close();
});

test('diff page colours growth red and ranks the grower first', async () => {
  const { page, errors, requests } = await open('diff.html');
  const list = await frames(page);
  const push = byName(list, 'registryPush');
  const cache = byName(list, 'cacheFill');
  const [pr, pg, pb] = await pixelAt(page, push);
  const [cr, cg, cb] = await pixelAt(page, cache);
  assert.ok(pr > pb + 60, `registryPush grew: red ${[pr, pg, pb]}`);
  assert.ok(cb > cr + 30, `cacheFill shrank: blue ${[cr, cg, cb]}`);
  assert.match(await page.locator('#summary').innerText(), /14\.0 MiB → 22\.0 MiB \(\+8\.00 MiB\)/);
  await page.screenshot({ path: path.join(artifacts, 'flamegraph-diff.png') });
  await page.click('#views button[data-view="table"]');
  await page.click('#table-head th[data-key="dflat"]');
  const first = (await page.locator('#table-body tr').first().innerText()).split('\t').map((c) => c.trim());
  assert.equal(first[4], 'registryPush');
  assert.equal(first[0], '+10.0 MiB');
  assert.deepEqual(errors, []);
  assert.deepEqual(requests.filter((u) => !u.startsWith('file:')), []);
  await page.close();
});

test('diff page leaves changes within sampling noise uncoloured and says so', async () => {
  const { page, errors } = await open('diff-noise.html');
  const list = await frames(page);
  const steady = byName(list, 'steady');
  const grower = byName(list, 'grower');
  const [sr, sg, sb] = await pixelAt(page, steady);
  const [gr, gg, gb] = await pixelAt(page, grower);
  // steady: +20 samples of ~1 KiB against a noise of about +-57 KiB: the unchanged colour.
  assert.ok(Math.abs(sr - sb) < 20 && Math.abs(sr - sg) < 20, `steady is within the noise: ${[sr, sg, sb]}`);
  assert.ok(gr > gb + 60, `grower grew beyond the noise: red ${[gr, gg, gb]}`);
  assert.match(await page.locator('#summary').innerText(), /within sampling noise \(95 %\) are not coloured/);
  const box = await page.locator('#flame').boundingBox();
  await page.mouse.move(box.x + steady.x + steady.w / 2, box.y + steady.y + steady.h / 2);
  assert.match(await page.locator('#tooltip').innerText(), /Noise\s+±[0-9.]+ KiB, the change is within it/);
  await page.mouse.move(box.x + grower.x + grower.w / 2, box.y + grower.y + grower.h / 2);
  assert.match(await page.locator('#tooltip').innerText(), /the change is beyond it/);
  assert.deepEqual(errors, []);
  await page.close();
});

test('50k-frame profile renders without freezing (time reported, not asserted)', async () => {
  const started = Date.now();
  const { page, errors } = await open('big.html');
  const loadMs = Date.now() - started;
  const info = await page.evaluate(() => ({
    nodes: window.heapprof.nodes,
    firstRenderMs: window.heapprof.firstRenderMs,
    drawn: window.heapprof.frames().length,
    merged: window.heapprof.frames().filter((f) => f.kind === 'merged').length,
  }));
  assert.ok(info.nodes >= 50000, `nodes: ${info.nodes}`);
  assert.ok(info.drawn > 100 && info.drawn < info.nodes, `drawn ${info.drawn} of ${info.nodes}`);
  assert.ok(info.merged > 0, 'tiny frames are merged');
  for (const f of await frames(page)) assert.ok(f.w >= 0.5, `${f.name} is ${f.w}px`);
  // Interactions on the big page, timed inside the page.
  const switchMs = await page.evaluate(() => {
    const t = performance.now();
    document.querySelector('#types button[data-type="alloc_objects"]').click();
    return performance.now() - t;
  });
  const tableMs = await page.evaluate(() => {
    const t = performance.now();
    document.querySelector('#views button[data-view="table"]').click();
    return performance.now() - t;
  });
  const size = fs.statSync(path.join(artifacts, 'big.html')).size;
  console.log(`50k-frame page: ${info.nodes} nodes, ${(size / 1024 / 1024).toFixed(1)} MiB; first render ` +
    `${info.firstRenderMs.toFixed(0)} ms in page (${loadMs} ms load incl. parse); ${info.drawn} frames drawn ` +
    `(${info.merged} merged blocks); sample-type switch ${switchMs.toFixed(0)} ms; table ${tableMs.toFixed(0)} ms`);
  await page.click('#views button[data-view="graph"]');
  await page.screenshot({ path: path.join(artifacts, 'flamegraph-50k.png') });
  assert.deepEqual(errors, []);
  await page.close();
});

// The CLI end to end: `heapprof flamegraph` / `heapprof diff` write pages the
// browser shows, and bad inputs fail with a clear message and exit code.
const cli = process.env.HEAPPROF_CLI;
function heapprof(...args) {
  const r = spawnSync(cli, args, { cwd: artifacts, encoding: 'utf8' });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

test('CLI: heapprof flamegraph and heapprof diff', { skip: !cli && 'the heapprof CLI is not built' }, async () => {
  let r = heapprof('flamegraph', 'known.pb.gz', '-o', 'cli-known.html', '--sample-index', 'alloc_space');
  assert.equal(r.status, 0, r.stderr);
  const { page, errors } = await open('cli-known.html');
  assert.equal((await state(page)).sampleType, 'alloc_space');
  const list = await frames(page);
  const width = (await state(page)).canvasWidth;
  assert.ok(Math.abs(byName(list, 'leak').w / width - 0.6) < 1e-9);
  assert.deepEqual(errors, []);
  await page.close();

  r = heapprof('flamegraph', 'known.pb.gz', '-o', 'cli-known.svg');
  assert.equal(r.status, 0, r.stderr);
  const svg = fs.readFileSync(path.join(artifacts, 'cli-known.svg'), 'utf8');
  assert.match(svg, /^<\?xml/);
  assert.match(svg, /<title>leak \(app\.js:\d+\)/);

  fs.writeFileSync(path.join(artifacts, 'not-a-profile.pb.gz'), 'this is not a profile\n');
  r = heapprof('flamegraph', 'not-a-profile.pb.gz', '-o', 'x.html');
  assert.equal(r.status, 1);
  assert.match(r.stderr, /^heapprof flamegraph: .*not-a-profile\.pb\.gz/);
  r = heapprof('flamegraph', 'empty.pb.gz', '-o', 'x.html');
  assert.equal(r.status, 1);
  assert.match(r.stderr, /no samples/);
  r = heapprof('flamegraph', 'known.pb.gz', '-o', 'x.html', '--sample-index', 'cpu');
  assert.equal(r.status, 2);
  assert.match(r.stderr, /unknown sample type "cpu"/);
  r = heapprof('flamegraph', 'missing.pb.gz', '-o', 'x.html');
  assert.equal(r.status, 1);
  assert.equal(fs.existsSync(path.join(artifacts, 'x.html')), false, 'no output on failure');

  r = heapprof('diff', 'leak-1.pb.gz', 'leak-2.pb.gz', '-s', 'inuse_space', '-n', '3', '--flamegraph', 'cli-diff.html');
  assert.equal(r.status, 0, r.stderr);
  const grew = r.stdout.split('Grew')[1].split('\n').filter((l) => /MiB/.test(l));
  assert.match(grew[0], /\+10\.0 MiB .*registryPush/);
  assert.match(r.stdout.split('Shrank')[1], /-3\.0 MiB .*cacheFill/);
  const diffPage = await open('cli-diff.html');
  const push = byName(await frames(diffPage.page), 'registryPush');
  const [red, , blue] = await pixelAt(diffPage.page, push);
  assert.ok(red > blue + 60, 'the grower is red');
  await diffPage.page.close();
  r = heapprof('diff', 'leak-1.pb.gz', 'empty.pb.gz');
  assert.equal(r.status, 1);
  assert.match(r.stderr, /new profile has no samples/);
  r = heapprof('diff', 'not-a-profile.pb.gz', 'leak-2.pb.gz');
  assert.equal(r.status, 1);
  assert.match(r.stderr, /^heapprof diff: /);
});

test('CLI: the diff of two prometheus-leak windows names the metrics registry as top grower',
  { skip: !cli && 'the heapprof CLI is not built' }, async () => {
    const worker = new URL('../../examples/workers/prometheus-leak.js', import.meta.url).pathname;
    // A short and a long window after the same warm-up; 16 KiB sampling keeps the noise low.
    for (const [name, requests] of [['prom-1', '1200'], ['prom-2', '4200']]) {
      const r = heapprof('run', worker, '--warmup', '200', '-n', requests, '--interval', '16k', '--top', '0',
        '-o', `${name}.pb.gz`, '--flamegraph', `${name}.html`);
      assert.equal(r.status, 0, r.stderr);
    }
    // `heapprof run --flamegraph` wrote the page of each window: observe() holds most of the memory in use.
    {
      const { page, errors } = await open('prom-2.html');
      assert.equal((await state(page)).sampleType, 'inuse_space');
      await page.fill('#search', '^observe$');
      const share = Number(await page.locator('#match').getAttribute('data-share'));
      assert.ok(share > 0.5, `observe holds ${share} of inuse_space`);
      // A sampled profile: the tooltip and the table give each share its 95 %
      // sampling error, the same as heapprof top prints (C++ and page JS agree).
      const top = heapprof('top', 'prom-2.pb.gz', '-n', '1');
      const [, topShare, topError] = top.stdout.match(/\s(\d+\.\d)% ±(\d+\.\d)\s+\d+\.\d%.*observe/);
      const observeFrame = byName(await frames(page), 'observe');
      const box = await page.locator('#flame').boundingBox();
      await page.mouse.move(box.x + observeFrame.x + observeFrame.w / 2, box.y + observeFrame.y + 8);
      const tip = await page.locator('#tooltip').innerText();
      assert.match(tip, /Self\s+\S+ \S+ \(\d+\.\d% ±\d+\.\d\)/, tip);
      assert.match(tip, /95 % sampling error/);
      await page.fill('#search', '');
      await page.click('#views button[data-view="table"]');
      const row = (await page.locator('#table-body tr').first().innerText()).split('\t').map((c) => c.trim());
      assert.equal(row[4], 'observe');
      assert.equal(row[1], `${topShare}% ±${topError}`, `table ${row[1]}, heapprof top ${topShare}% ±${topError}`);
      await page.click('#views button[data-view="graph"]');
      await page.screenshot({ path: path.join(artifacts, 'prometheus-leak.png') });
      assert.deepEqual(errors, []);
      await page.close();
    }
    const r = heapprof('diff', 'prom-1.pb.gz', 'prom-2.pb.gz', '-s', 'inuse_space', '-n', '5',
      '--flamegraph', 'prometheus-leak-diff.html');
    assert.equal(r.status, 0, r.stderr);
    console.log(r.stdout.trim().split('\n').map((l) => '  ' + l).join('\n'));
    const grew = r.stdout.split('Grew')[1].split('\n').filter((l) => /[KMG]iB|\d B/.test(l));
    assert.match(grew[0], /observe \(prometheus-leak\.js:\d+\)/, `top grower: ${grew[0]}`);
    const { page, errors } = await open('prometheus-leak-diff.html');
    const observe = (await frames(page)).filter((f) => f.name === 'observe');
    assert.ok(observe.length > 0, 'observe is drawn');
    await page.screenshot({ path: path.join(artifacts, 'prometheus-leak-diff.png') });
    assert.deepEqual(errors, []);
    await page.close();
  });
