// `heapprof top` prints each share with its 95 % sampling error. This test
// recomputes every printed "±" independently, from the stored profile decoded
// by pprof-format (not by heapprof): raw samples per row from value, object
// size and period; Horvitz-Thompson variances; the delta method for a share;
// a Wilson score interval on the effective sample count (docs/statistics.md).
// Run by CTest as `node --test`, with HEAPPROF_CLI, HEAPPROF_PROFILE and
// HEAPPROF_JS_DIR (tests/js with node_modules).
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const zlib = require('node:zlib');

const cli = process.env.HEAPPROF_CLI;
const file = process.env.HEAPPROF_PROFILE;
const pprof = require(path.join(process.env.HEAPPROF_JS_DIR, 'node_modules', 'pprof-format'));
const Z = 1.959963984540054;  // standard normal 97.5 % quantile

const p = pprof.Profile.decode(zlib.gunzipSync(fs.readFileSync(file)));
const str = (i) => p.stringTable.strings[Number(i)];
const period = Number(p.period);
// A function as the table shows it: "name  file.js:line" (several built-ins share a name).
const fnName = new Map(p.function.map((f) => {
  const file = path.basename(str(f.filename));
  const line = Number(f.startLine);
  return [Number(f.id), str(f.name) + (file ? `  ${file}${line > 0 ? `:${line}` : ''}` : '')];
}));
const locFn = new Map(p.location.map((l) => [Number(l.id), fnName.get(Number(l.line[0].functionId))]));

// Per function: flat and cum {value, variance}, and the sample type's total.
function sampling(typeName) {
  const index = p.sampleType.findIndex((t) => str(t.type) === typeName);
  const space = str(p.sampleType[index].unit) === 'bytes';
  const fns = new Map();
  const total = { value: 0, variance: 0, samples: 0 };
  const get = (name) => {
    if (!fns.has(name)) fns.set(name, { flat: { value: 0, variance: 0 }, cum: { value: 0, variance: 0 } });
    return fns.get(name);
  };
  for (const s of p.sample) {
    const value = Number(s.value[index]);
    if (value === 0) continue;
    const size = Number(s.label.find((l) => str(l.key) === 'bytes').num);
    const prob = 1 - Math.exp(-size / period);
    const weight = space ? size / prob : 1 / prob;
    const n = Math.max(1, Math.round(value / weight));
    const variance = n * (1 - prob) * weight * weight;
    total.value += value;
    total.variance += variance;
    total.samples += n;
    const names = s.locationId.map((id) => locFn.get(Number(id)));
    get(names[0]).flat.value += value;
    get(names[0]).flat.variance += variance;
    for (const name of new Set(names)) {
      get(name).cum.value += value;
      get(name).cum.variance += variance;
    }
  }
  return { fns, total };
}

// Half-width in points of the share part/total, the larger side of the interval.
function halfWidth(part, total) {
  const r = part.value / total.value;
  const v = (part.variance * (1 - r) ** 2 + (total.variance - part.variance) * r * r) / total.value ** 2;
  const n = r > 0 && r < 1 ? (r * (1 - r)) / v : total.value ** 2 / total.variance;
  const z2n = (Z * Z) / n;
  const center = (r + z2n / 2) / (1 + z2n);
  const half = (Z / (1 + z2n)) * Math.sqrt((r * (1 - r)) / n + z2n / (4 * n));
  const low = Math.max(0, Math.min(center - half, r)), high = Math.min(1, Math.max(center + half, r));
  return 100 * Math.max(high - r, r - low);
}

// The rows of a top table: {name, flatHalf, cumHalf}, and the whole text.
function top(args) {
  const text = execFileSync(cli, ['top', file, ...args], { encoding: 'utf8' });
  const rows = [];
  for (const line of text.split('\n')) {
    const m = line.match(/^\s+\S+(?: \S+)?\s+[\d.]+% ±([\d.]+)\s+[\d.]+%\s+\S+(?: \S+)?\s+[\d.]+% ±([\d.]+)  (.+)$/);
    if (m) rows.push({ name: m[3], flatHalf: Number(m[1]), cumHalf: Number(m[2]) });
  }
  return { text, rows };
}

for (const [type, args] of [['alloc_space', ['-s', 'alloc_space', '-n', '12']], ['inuse_space', []],
  ['inuse_objects', ['-s', 'inuse_objects', '--cum']]]) {
  test(`every ± of ${type} matches an independent computation`, () => {
    const { fns, total } = sampling(type);
    const { text, rows } = top(args);
    assert.ok(rows.length >= 4, text);
    assert.match(text, new RegExp(`from ${total.samples} samples`));
    for (const row of rows) {
      const f = fns.get(row.name);
      assert.ok(f, `${row.name} is in the profile`);
      assert.ok(Math.abs(row.flatHalf - halfWidth(f.flat, total)) <= 0.051,
        `${type} ${row.name} flat: printed ±${row.flatHalf}, computed ±${halfWidth(f.flat, total).toFixed(2)}`);
      assert.ok(Math.abs(row.cumHalf - halfWidth(f.cum, total)) <= 0.051,
        `${type} ${row.name} cum: printed ±${row.cumHalf}, computed ±${halfWidth(f.cum, total).toFixed(2)}`);
    }
  });
}

test('a sample type with too few samples says so and suggests an interval', () => {
  const { total } = sampling('inuse_space');
  const { text, rows } = top([]);
  // 15 samples at 512 KiB: the widest share is tens of points wide.
  const widest = Math.max(...rows.map((r) => Math.max(r.flatHalf, r.cumHalf)));
  assert.ok(widest > 10, text);
  // ~400 samples put a 50 % share within ±5 points: the interval, a power of two below.
  let suggested = 1024;
  while (suggested * 2 <= (period * total.samples) / 400) suggested *= 2;
  assert.match(text, new RegExp(`inuse_space: ${total.samples} samples; shares are ±${Math.round(widest)} points, ` +
    `too few to rank functions; rerun with --interval ${suggested / 1024}KiB or more requests`));
  // alloc_space has ~100 samples: its shares are within 10 points, no warning.
  const alloc = top(['-s', 'alloc_space']);
  assert.doesNotMatch(alloc.text, /too few/);
  assert.match(alloc.text, /± is the 95 % sampling error of a share/);
});
