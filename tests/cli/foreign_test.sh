#!/usr/bin/env bash
# Error bars for profiles heapprof did not write: a heap profile written by
# @datadog/pprof (tests/js) from Node 20 has no "bytes" label but a period and
# one row per V8 allocation entry (sample types inuse_objects/inuse_space), so `heapprof top` estimates each row's raw
# samples (docs/statistics.md) and prints "±" like for its own profiles. A profile without a period says in one line why it
# has no error bars.
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
source "$here/lib.sh"
js="$src/tests/js/node_modules"
[ -d "$js/@datadog/pprof" ] || { echo "no @datadog/pprof in tests/js (tools/bootstrap.sh)" >&2; exit 1; }

cat >dd.cjs <<JS
const fs = require('fs');
const pprof = require('$js/@datadog/pprof');
pprof.heap.start(64 * 1024, 64);
const kept = [];
function keepRecords(i) { kept.push({ id: i, name: 'record-' + i, tags: ['a' + (i % 7), 'b' + (i % 13)] }); }
function churn(i) { return JSON.parse(JSON.stringify({ i, s: 'x'.repeat(i % 50) })).s.length; }
let sink = 0;
for (let i = 0; i < 200000; i++) { keepRecords(i); sink += churn(i); }
fs.writeFileSync(process.argv[2], pprof.encodeSync(pprof.heap.profile()));
pprof.heap.stop();
console.log(kept.length, sink > 0);
JS
expect_exit 0 node -- node dd.cjs dd.pb.gz
expect_exit 0 top -- "$heapprof" top dd.pb.gz -n 5
expect_in top.out "inuse_space: total"
expect_in top.out " samples, "
expect_in top.out "% ±"
expect_in top.out "(± is the 95 % sampling error of a share, in points)"
expect_in top.out "keepRecords  dd.cjs"
# The raw samples estimated for a 64 KiB interval: the kept records are small
# objects, so n ~ space / interval (within rounding of each row).
awk '$1 == "inuse_space:" {
  v = $3; u = $4; sub(/,$/, "", u); m = (u == "KiB") ? 1024 : (u == "MiB") ? 1048576 : (u == "GiB") ? 1073741824 : 1;
  for (i = 1; i <= NF; i++) if ($(i + 1) ~ /^samples?,$/ && $i ~ /^[0-9]+$/) n = $i;
  want = v * m / 65536; exit !(n > 0.8 * want && n < 1.25 * want)
}' top.out || fail "the estimated sample count is far from space / interval: $(head -1 top.out)"
expect_exit 0 top-objects -- "$heapprof" top dd.pb.gz -s inuse_objects -n 3
expect_in top-objects.out "% ±"

# No period (a DevTools .heapprofile has none): one line says why there are no error bars.
expect_exit 0 top-chrome -- "$heapprof" top "$src/tests/fuzz/corpus/heapprofile/node-heap-prof.heapprofile" -n 3
expect_in top-chrome.out "(no sampling error: the profile does not say how often it was sampled (no period))"
finish
