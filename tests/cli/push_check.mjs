// Checks what push_store.mjs accepted: no push refused by the store's
// checks, at least MIN series, each with the four memory profile types and
// the labels given (NAME=VALUE, or NAME~REGEX), and prints the series count,
// then one accepted profile file a line.
//   node push_check.mjs LOG MIN [NAME=VALUE|NAME~REGEX ...]
import fs from 'node:fs';

const [log, min, ...wanted] = process.argv.slice(2);
const lines = fs.readFileSync(log, 'utf8').trim().split('\n').filter(Boolean).map((l) => JSON.parse(l));
const refused = lines.filter((l) => l.status === 400);
if (refused.length) throw new Error(`refused by the store's checks: ${refused.map((l) => l.error).join('; ')}`);
const series = lines.filter((l) => l.status === 200).flatMap((l) => l.series);
if (series.length < Number(min)) throw new Error(`${series.length} series accepted, fewer than ${min}`);
const types = ['memory:alloc_objects:count:space:bytes', 'memory:alloc_space:bytes:space:bytes',
               'memory:inuse_objects:count:space:bytes', 'memory:inuse_space:bytes:space:bytes'];
for (const s of series) {
  for (const w of wanted) {
    const m = /^([A-Za-z_][A-Za-z0-9_]*)([=~])(.*)$/.exec(w);
    const got = s.labels[m[1]];
    const ok = m[2] === '=' ? got === m[3] : got !== undefined && new RegExp(m[3]).test(got);
    if (!ok) throw new Error(`label ${m[1]} is ${JSON.stringify(got)}, not ${m[2]}${m[3]}`);
  }
  for (const smp of s.samples) {
    if (JSON.stringify(smp.types) !== JSON.stringify(types)) throw new Error(`types ${smp.types}`);
  }
}
console.log(series.length);
for (const s of series) for (const smp of s.samples) console.log(smp.file);
