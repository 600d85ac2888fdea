#!/usr/bin/env bash
# A request's timers end with the request, in both runtimes: a worker that
# starts an interval holding about half a megabyte on each request and never
# clears it (tests/cli/data/request_timers/heartbeats.js) is run embedded and
# in workerd, and at each window's end the interval's function holds no more
# than a few requests' worth (workerd cancels a request's timers with its
# IoContext; kept, they would hold every request's). Then a leak session on
# it, embedded: no site is growing. The profiles are decoded by pprof-format,
# not by heapprof.
#   request_timers_test.sh <heapprof> <source dir> <work dir>
source "$(dirname "$0")/lib.sh"
export HEAPPROF_WORKERD="$src/.deps/workerd/bin/workerd"
[ -x "$HEAPPROF_WORKERD" ] || { echo "workerd is not installed (tools/bootstrap.sh)"; exit 1; }
# This test's workerd only: heapprof makes its workerd config folder under $TMPDIR.
export TMPDIR="$work/tmp"
mkdir -p "$TMPDIR"
worker="$src/tests/cli/data/request_timers/heartbeats.js"
requests=400
warmup=100

# bytes <profile> <sample type> <function>: the cum value of the function
# (samples whose stack contains it, each once).
bytes() {
  node - "$1" "$2" "$3" "$src/tests/js/node_modules" <<'JS'
const [file, type, fn, modules] = process.argv.slice(2);
const pprof = require(require('node:path').join(modules, 'pprof-format'));
const p = pprof.Profile.decode(require('node:zlib').gunzipSync(require('node:fs').readFileSync(file)));
const str = (i) => p.stringTable.strings[Number(i)];
const index = p.sampleType.findIndex((t) => str(t.type) === type);
const fnIds = new Set(p.function.filter((f) => str(f.name) === fn).map((f) => Number(f.id)));
const hits = new Set(p.location.filter((l) => l.line.some((x) => fnIds.has(Number(x.functionId)))).map((l) => Number(l.id)));
let sum = 0;
for (const s of p.sample) if (s.locationId.some((id) => hits.has(Number(id)))) sum += Number(s.value[index]);
console.log(sum);
JS
}

expect_exit 0 embedded -- "$heapprof" run "$worker" --requests "$requests" --warmup "$warmup" --interval 16KiB \
  -o embedded.pb.gz --top 3
expect_exit 0 workerd -- "$heapprof" run "$worker" --runtime workerd --requests "$requests" --warmup "$warmup" \
  --interval 16KiB -o workerd.pb.gz --top 3
for out in embedded workerd; do expect_in "$out.out" "responses by status: 200 x$requests"; done

# What one request's heartbeat allocates, from the embedded window (its
# requests are exactly those after the warm-up): some 0.5 MB, about 34
# samples of 16 KiB, so the estimate is good to about 17 % (1 SD).
alloc="$(bytes embedded.pb.gz alloc_space startHeartbeat)"
per_request=$((alloc / (requests - warmup)))
echo "startHeartbeat allocates $per_request B a request (embedded alloc_space $alloc B)"
[ "$per_request" -gt 200000 ] || fail "startHeartbeat allocated $per_request B a request, not about 0.5 MB"
# Kept, the window's 300 intervals would hold about 300 requests' worth at
# its end; freed, a sample at most in either runtime (what V8 made for the
# function itself, its optimized code): 0 to 26 KB in the runs measured, mean
# 7 KB, SD 11 KB. The bound, 4 requests' worth (some 2.2 MB), is over 100 SD
# above that and stays far below a kept interval's share.
bound=$((4 * per_request))
for runtime in embedded workerd; do
  held="$(bytes "$runtime.pb.gz" inuse_space startHeartbeat)"
  echo "$runtime: startHeartbeat holds $held B at the window's end (bound $bound B)"
  [ "$held" -le "$bound" ] || fail "$runtime: startHeartbeat holds $held B at the window's end, more than $bound B"
done

# A leak session: the snapshots see the intervals' memory come and go with
# each request, so no site is growing.
expect_exit 0 leaks -- "$heapprof" run "$worker" --leaks --requests 1500 --cadence 10ms -o leaks.pb.gz \
  --leaks-json leaks.json --top 3
expect_in leaks.out "Leak session on heartbeats.js"
node -e '
  const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  const growing = r.sites.filter((s) => s.verdict === "growing").map((s) => s.frames.map((f) => f.function).join(" < "));
  console.log(`leak session: ${r.snapshots} snapshots, ${r.requests} requests, ${r.sites.length} sites, growing: ${growing.join("; ") || "none"}`);
  process.exit(r.snapshots >= 3 && growing.length === 0 ? 0 : 1);' leaks.json ||
  fail "the leak session calls a site growing (or took fewer than 3 snapshots)"
finish
