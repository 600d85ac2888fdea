// Companion to encode_bench: re-encodes the synthetic profiles that
// `encode_bench --raw-out=DIR` wrote with the npm package pprof-format and
// gzips them with Node's zlib defaults, which is how @datadog/pprof's
// encode() produces its files, and prints sizes and times next to ours.
//   node tools/bench/pprof_format_size.js DIR [--json FILE]
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const zlib = require('node:zlib');

const root = path.resolve(__dirname, '..', '..');
const { Profile } = require(path.join(root, 'tests', 'js', 'node_modules', 'pprof-format'));
const dir = process.argv[2];
if (!dir) {
  console.error('usage: node tools/bench/pprof_format_size.js DIR (from encode_bench --raw-out=DIR)');
  process.exit(2);
}

function timeMs(fn, reps) {
  const start = process.hrtime.bigint();
  let out;
  for (let i = 0; i < reps; i++) out = fn();
  return [Number(process.hrtime.bigint() - start) / 1e6 / reps, out];
}

const jsonAt = process.argv.indexOf('--json');
const report = {};
console.log('locations  heapprof raw  pprof-format raw  pprof-format+gzip(6)  encode+gzip ms  heapprof gzip(1)  heapprof gzip(6)');
for (const n of [1000, 10000, 50000]) {
  const file = path.join(dir, `synthetic-${n}.pb`);
  if (!fs.existsSync(file)) continue;
  const ours = fs.readFileSync(file);
  const profile = Profile.decode(ours);
  const [ms, gz] = timeMs(() => zlib.gzipSync(profile.encode()), 3);
  const raw = profile.encode();
  console.log([String(n).padEnd(10), String(ours.length).padStart(12), String(raw.length).padStart(17),
    String(gz.length).padStart(21), ms.toFixed(1).padStart(15),
    String(zlib.gzipSync(ours, { level: 1 }).length).padStart(17),
    String(zlib.gzipSync(ours, { level: 6 }).length).padStart(17)].join(' '));
  report[n] = { heapprof_raw: ours.length, pprof_format_raw: raw.length, pprof_format_gzip: gz.length,
                pprof_format_encode_gzip_ms: ms, heapprof_gzip6: zlib.gzipSync(ours, { level: 6 }).length };
}
if (jsonAt > 0) fs.writeFileSync(process.argv[jsonAt + 1], JSON.stringify(report, null, 2) + '\n');
