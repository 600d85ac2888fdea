// Checks that no file name a `heapprof top` table prints is ambiguous within
// its profile: every printed location (`file:line`) must be a suffix of
// whole path components of exactly one file of the profile, decoded here by
// pprof-format, not by heapprof.
//   node file_labels_check.mjs PROFILE.pb.gz TABLE.txt JS_NODE_MODULES
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { createRequire } from 'node:module';

const [profilePath, tablePath, nodeModules] = process.argv.slice(2);
const require = createRequire(path.join(nodeModules, 'x.js'));
const pprof = require('pprof-format');
const p = pprof.Profile.decode(zlib.gunzipSync(fs.readFileSync(profilePath)));
const files = new Set(p.function.map((f) => p.stringTable.strings[Number(f.filename)]).filter(Boolean));

let rows = 0, problems = 0;
for (const line of fs.readFileSync(tablePath, 'utf8').split('\n')) {
  // A row: flat, flat% ±, sum%, cum, cum% ±, function[, file:line], separated by 2+ spaces.
  const parts = line.trim().split(/\s{2,}/);
  if (parts.length !== 7 || !/%/.test(parts[1])) continue;
  rows++;
  const label = parts[6].replace(/:\d+$/, '');
  const matches = [...files].filter((f) => f === label || f.endsWith('/' + label) ||
                                          (label.startsWith('heapprof:') && f === label));
  if (matches.length !== 1) {
    problems++;
    console.error(`ambiguous or unknown file label "${label}": ${matches.length} files of the profile end with it` +
                  (matches.length ? `: ${matches.slice(0, 4).join(', ')}` : ''));
  }
}
if (rows === 0) {
  console.error(`no table rows with a file in ${tablePath}`);
  process.exit(1);
}
console.log(`${rows} rows with a file, ${files.size} files in the profile, ${problems} ambiguous`);
process.exit(problems ? 1 : 0);
