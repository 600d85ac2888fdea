#!/usr/bin/env bash
# heapprof run --leaks in the embedded runtime: a worker holding an LRU cache
# and a leak of about the same bytes (tests/cli/data/leaks/lru-and-leak.js).
# The leak is growing, the cache is not; the profile's in-use samples carry
# the age label and the growth report in its comments; the JSON sidecar has
# the verdicts; with --replicas each profiled replica gets its own report.
# Then the flags --leaks cannot go with, refused before the run.
#   leaks_run_test.sh <heapprof> <source dir> <work dir>
source "$(dirname "$0")/lib.sh"
# shellcheck source=../pprof_readers/go_env.sh
source "$src/tests/pprof_readers/go_env.sh"
go_env "$work"
worker="$src/tests/cli/data/leaks/lru-and-leak.js"

# verdict <json> <function>: the verdict of the site whose leaf is the function.
verdict() {
  node -e '
    const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    const s = r.sites.find((s) => s.frames.length && s.frames[0].function === process.argv[2]);
    console.log(s ? s.verdict : "absent");' "$1" "$2"
}

expect_exit 0 leaks -- "$heapprof" run "$worker" --leaks --requests 12400 --cadence 10ms -o leaks.pb.gz \
  --leaks-json leaks.json --top 5
expect_in leaks.err "leak session on lru-and-leak.js"
expect_in leaks.out "Leak session on lru-and-leak.js"
expect_in leaks.out "Growth over"
expect_in leaks.out "12400 requests"
expect_in leaks.out "Memory in use at the leak session's last snapshot"
leak="$(verdict leaks.json keepForever)"
cache="$(verdict leaks.json cacheEntry)"
echo "keepForever: $leak, cacheEntry: $cache"
[ "$leak" = growing ] || fail "the leak's verdict is $leak, not growing"
case "$cache" in growing | absent) fail "the cache's verdict is $cache" ;; esac
# The two hold about the same bytes at the end (within a factor of 3), and
# the per-request rate is there (the run counts its requests).
node -e '
  const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  const live = (f) => r.sites.filter((s) => s.frames.length && s.frames[0].function === f).reduce((a, s) => a + s.live_bytes, 0);
  const a = live("keepForever"), b = live("cacheEntry");
  console.log(`live: keepForever ${a}, cacheEntry ${b}; requests ${r.requests}; snapshots ${r.snapshots}`);
  const leak = r.sites.find((s) => s.frames.length && s.frames[0].function === "keepForever");
  if (!(r.snapshots >= 3 && r.requests > 0 && leak.whole.per_1000_requests > 0)) process.exit(1);
  process.exit(a > 0 && b > 0 && a / b < 3 && b / a < 3 ? 0 : 1);' leaks.json ||
  fail "the leak and the cache do not hold about the same bytes, or the session lacks snapshots or requests"
# The profile: the growth report in its comments, in-use samples with their age.
go tool pprof -raw leaks.pb.gz 2>/dev/null | grep -q "leaks: heap used" || fail "the profile's comments lack the growth report"
"$heapprof" top leaks.pb.gz -n 3 >top.out 2>&1 || fail "heapprof top cannot read the leak profile"
expect_in top.out keepForever
inlining="$(go tool pprof -comments leaks.pb.gz 2>/dev/null | sed -n 's/^inlining: //p' | head -1)"
[ "$inlining" = disabled ] || fail "the profile records inlining as '$inlining', not disabled"
tagged="$(go tool pprof -raw leaks.pb.gz 2>/dev/null | grep -c 'age:\[' || true)"
[ "$tagged" -ge 1 ] || fail "no in-use sample carries the age label"

# Replicas: one session, report and JSON per profiled replica.
expect_exit 0 replicas -- "$heapprof" run "$worker" --leaks --replicas 2 --requests 1500 --cadence 100ms \
  -o rep.pb.gz --leaks-json rep.json --top 0
for i in 0 1; do
  [ -s "rep-lru-and-leak-$i.pb.gz" ] || fail "replicas: no rep-lru-and-leak-$i.pb.gz"
  [ "$(verdict "rep-lru-and-leak-$i.json" keepForever)" != absent ] || fail "replicas: no report in rep-lru-and-leak-$i.json"
done

# When the limit comes: a worker leaking the same bytes per request towards
# --heap-limit 32. A shorter session projects the requests left to the limit
# (the limit is the old generation's share of --heap-limit: where V8 runs out);
# a second run to the limit says when it was reached. The count is the same in
# both runs (a leak per request does not depend on the machine's speed), so
# the projection must hold it: within 5 standard deviations of its interval
# (the 95 % interval is printed too).
limited="$src/tests/cli/data/leaks/leak-to-limit.js"
# (2000 of the ~2600 requests: enough snapshots in the last part on a fast machine too.)
expect_exit 0 project -- "$heapprof" run "$limited" --leaks --heap-limit 32 --requests 2000 --warmup 50 --cadence 2ms \
  -o project.pb.gz --leaks-json project.json --top 1
expect_in project.out "more requests (95 %:"
expect_exit 1 tolimit -- "$heapprof" run "$limited" --leaks --heap-limit 32 --duration 120s --cadence 200ms \
  -o tolimit.pb.gz --top 1
grep -q "heap limit" tolimit.err || fail "tolimit: the run did not end at the heap limit: $(cat tolimit.err)"
reached="$(sed -n 's/^The heap reached its limit after \([0-9]*\) requests$/\1/p' tolimit.out)"
[ -n "$reached" ] || fail "tolimit: no line says when the heap reached its limit"
node -e '
  const p = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).projection;
  const reached = Number(process.argv[2]), at = 2000;
  console.log(`${p.text}\nprojected after ${(at + p.requests_to_limit).toFixed(0)} requests (95 %: ${(at + p.requests_low).toFixed(0)}-${p.requests_high == null ? "inf" : (at + p.requests_high).toFixed(0)}); reached after ${reached}`);
  const mib = 1 << 20;
  if (!(p.heap_limit_bytes > 20 * mib && p.heap_limit_bytes < 32 * mib) || !/32.00 MiB heap limit/.test(p.limit_source)) {
    console.log("the limit is not the old generation of --heap-limit 32"); process.exit(1);
  }
  if (!p.growing || p.requests_to_limit == null || p.requests_high == null) { console.log("no projection in requests"); process.exit(1); }
  const sd = (p.requests_high - p.requests_low) / (2 * 1.96);
  const off = Math.abs(at + p.requests_to_limit - reached) / sd;
  console.log(`off by ${off.toFixed(2)} sd; the 95 % interval ${at + p.requests_low <= reached && reached <= at + p.requests_high ? "holds" : "misses"} it`);
  process.exit(off <= 5 ? 0 : 1);' project.json "$reached" ||
  fail "the projection does not hold the moment the heap reached its limit"

# Flags --leaks cannot go with, and its own flags without it: refused up front (exit 2), nothing written.
expect_exit 2 cadence -- "$heapprof" run "$worker" --cadence 1s --requests 300 -o cadence.pb.gz
expect_in cadence.err "belong to --leaks"
expect_exit 2 json -- "$heapprof" run "$worker" --leaks-json x.json --requests 300 -o json.pb.gz
expect_in json.err "belong to --leaks"
expect_exit 2 continuous -- "$heapprof" run "$worker" --leaks --continuous 1s --requests 300 -o continuous.pb.gz
expect_in continuous.err "--continuous"
expect_exit 2 index -- "$heapprof" run "$worker" --leaks --sample-index alloc_space --requests 300 -o index.pb.gz
expect_in index.err "needs a window"
expect_exit 2 workerd -- "$heapprof" run "$worker" --leaks --runtime workerd --requests 300 -o workerd.pb.gz
expect_in workerd.err "heapprof attach"
for f in cadence json continuous index workerd; do
  [ ! -e "$f.pb.gz" ] || fail "$f: an output file was written"
done
[ ! -e x.json ] || fail "json: a JSON file was written"
finish
