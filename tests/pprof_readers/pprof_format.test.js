// The npm package pprof-format (an independent decoder and encoder, no
// protobuf library) against heapprof: it decodes our file with the model's
// totals, and heapprof reads a profile that pprof-format encoded.
// Run by CTest as `node --test`, with HEAPPROF_FIXTURE (make_profile),
// HEAPPROF_WORK (a scratch dir) and HEAPPROF_JS_DIR (tests/js with node_modules).
'use strict';
const test = require('node:test');
const assert = require('node:assert/strict');
const { execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const zlib = require('node:zlib');

const fixture = process.env.HEAPPROF_FIXTURE;
const work = process.env.HEAPPROF_WORK;
const jsDir = process.env.HEAPPROF_JS_DIR;
const pprof = require(path.join(jsDir, 'node_modules', 'pprof-format'));

// "total <type> <n>" and "function <name>" lines printed by make_profile.
function parseFixtureOutput(text) {
  const totals = {};
  const functions = [];
  for (const line of text.split('\n')) {
    const [kind, ...rest] = line.split(' ');
    if (kind === 'total') totals[rest[0]] = BigInt(rest[1]);
    if (kind === 'function') functions.push(rest.join(' '));
  }
  return { totals, functions };
}

fs.mkdirSync(work, { recursive: true });

test('pprof-format decodes our file with the model totals', () => {
  const file = path.join(work, 'worker.pb.gz');
  const expected = parseFixtureOutput(execFileSync(fixture, ['write', file], { encoding: 'utf8' }));
  const bytes = fs.readFileSync(file);
  assert.equal(bytes[0], 0x1f, 'files on disk are gzipped');
  assert.equal(bytes[1], 0x8b);
  const p = pprof.Profile.decode(zlib.gunzipSync(bytes));
  const str = (i) => p.stringTable.strings[Number(i)];

  assert.equal(str(0), '');
  assert.deepEqual(p.sampleType.map((t) => `${str(t.type)}/${str(t.unit)}`),
    ['alloc_objects/count', 'alloc_space/bytes', 'inuse_objects/count', 'inuse_space/bytes']);
  assert.equal(str(p.defaultSampleType), 'inuse_space');
  assert.equal(`${str(p.periodType.type)}/${str(p.periodType.unit)}`, 'space/bytes');
  assert.equal(Number(p.period), 512 * 1024);

  const functionIds = new Set(p.function.map((f) => Number(f.id)));
  const locationIds = new Set(p.location.map((l) => Number(l.id)));
  assert.equal(functionIds.size, p.function.length, 'function ids are unique');
  assert.equal(locationIds.size, p.location.length, 'location ids are unique');
  assert.ok(!functionIds.has(0) && !locationIds.has(0), 'ids are never 0');
  for (const l of p.location) for (const line of l.line) assert.ok(functionIds.has(Number(line.functionId)));

  const totals = [0n, 0n, 0n, 0n];
  for (const s of p.sample) {
    assert.equal(s.value.length, 4);
    for (const id of s.locationId) assert.ok(locationIds.has(Number(id)), `location ${id} exists`);
    s.value.forEach((v, i) => { totals[i] += BigInt(v); });
    const bytesLabel = s.label.find((l) => str(l.key) === 'bytes');
    assert.ok(bytesLabel && Number(bytesLabel.num) > 0, 'each sample has a numeric "bytes" label');
  }
  assert.deepEqual(totals, ['alloc_objects', 'alloc_space', 'inuse_objects', 'inuse_space']
    .map((t) => expected.totals[t]));
  assert.deepEqual(p.function.map((f) => str(f.name)).sort(), [...expected.functions].sort());
});

test('heapprof reads a profile encoded by pprof-format, sparse ids and all', () => {
  const strings = new pprof.StringTable();
  const s = (x) => strings.dedup(x);
  const fn = (id, name) => new pprof.Function({ id, name: s(name), filename: s('app.js'), startLine: id });
  const loc = (id, functionId) => new pprof.Location({ id, line: [new pprof.Line({ functionId, line: 3 })] });
  const profile = new pprof.Profile({
    sampleType: [new pprof.ValueType({ type: s('alloc_space'), unit: s('bytes') }),
      new pprof.ValueType({ type: s('inuse_space'), unit: s('bytes') })],
    function: [fn(900, 'outer'), fn(17, 'inner')],
    location: [loc(5000, 900), loc(42, 17)],
    sample: [new pprof.Sample({ locationId: [42, 5000], value: [1000, 400] }),
      new pprof.Sample({ locationId: [5000], value: [24, 0] })],
    stringTable: strings,
    periodType: new pprof.ValueType({ type: s('space'), unit: s('bytes') }),
    period: 4096,
  });
  const file = path.join(work, 'from-pprof-format.pb.gz');
  fs.writeFileSync(file, zlib.gzipSync(profile.encode()));
  const seen = parseFixtureOutput(execFileSync(fixture, ['show', file], { encoding: 'utf8' }));
  assert.deepEqual(seen.totals, { alloc_space: 1024n, inuse_space: 400n });
  assert.deepEqual(seen.functions, ['inner', 'outer']);
});
