#!/usr/bin/env bash
# heapprof serve --leaks beside the page's browser test: a replica whose
# isolate is recreated at the heap limit starts a new leak session (the old
# sampler's ids are gone with its isolate) and its report says so; a session
# starts before the worker's module loads (a cache filled at load is not
# growing); the leak
# endpoints without --leaks answer 404 with why; --cadence and --leaks-json
# without --leaks are refused before serving, as heapprof run refuses them.
#   leaks_serve_test.sh <heapprof> <source dir> <work dir>
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
source "$here/lib.sh"
# shellcheck source=serve_lib.sh
source "$here/serve_lib.sh"
command -v curl >/dev/null || { echo "curl is not installed" >&2; exit 1; }
limited="$src/tests/cli/data/leaks/leak-to-limit.js"
lru="$src/tests/cli/data/leaks/lru-and-leak.js"

# The session starts before the worker's module loads: lru-and-leak.js fills
# its cache (6000 entries of ~1.1 KB) at load, then each request turns four
# over. Sampled from before the load, the entries made at load are in the
# session, under their own stack (cacheEntry < remember < the module's top
# level): grown during the load, then only dying, so not growing; with the
# request stack's, the cache's whole ~6.6 MB is live. Had the sampler started
# after the load, the 2400 entries of 600 requests (~2.6 MB) would be all the
# session saw of the cache. (The request stack reads as growing until the
# cache has turned over once, 1500 requests: it replaces the load's entries.)
start_serve lru "$lru" --leaks --cadence 20ms --interval 16KiB
trap 'kill -9 $serve_pid 2>/dev/null || true' EXIT
curl -s -o /dev/null "$base/[1-600]"
sleep 0.3
[ "$(curl -s -o lru.json -w '%{http_code}' "$debug/debug/heapprof/leaks")" = 200 ] || fail "the leak report: $(cat lru.json)"
node -e '
  const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  const sites = r.sites.filter((s) => s.frames.length && s.frames[0].function === "cacheEntry");
  const atLoad = sites.filter((s) => !s.frames.some((f) => f.function === "fetch"));
  const live = sites.reduce((a, s) => a + s.live_bytes, 0);
  const loadLive = atLoad.reduce((a, s) => a + s.live_bytes, 0);
  console.log(`cacheEntry: ${live.toFixed(0)} B live, ${loadLive.toFixed(0)} B of it made at load (${atLoad.map((s) => s.verdict).join(" ")}); ` +
    `${r.requests} requests, ${r.session.snapshots} snapshots`);
  process.exit(atLoad.length > 0 && !atLoad.some((s) => s.verdict === "growing") && loadLive > 2.5e6 && live > 5e6 ? 0 : 1);' lru.json ||
  fail "the cache entries made at load are not in the session, or read as growing"
stop_serve

# ~10 KiB kept a request reaches --heap-limit 32 after ~2600 requests: the replica is recreated.
start_serve limit "$limited" --leaks --cadence 20ms --heap-limit 32 --leaks-json final.json
curl -s -o /dev/null "$base/[1-3200]"
# The new isolate's session needs two snapshots: the endpoint says 503 until then.
code=503
for _ in $(seq 1 100); do
  code="$(curl -s -o after.json -w '%{http_code}' "$debug/debug/heapprof/leaks")"
  [ "$code" = 503 ] || break
  sleep 0.1
done
[ "$code" = 200 ] || fail "the recreated replica's leak report got $code: $(cat after.json)"
node -e '
  const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  console.log(`after the restart: restarts ${r.session.restarts}, ${r.session.snapshots} snapshots, ${r.requests} requests`);
  process.exit(r.session.restarts === 1 && r.session.snapshots >= 2 ? 0 : 1);' after.json ||
  fail "the report after the isolate's re-creation does not say it began with the new isolate"
stop_serve
expect_in limit.out "served 3199 requests, 1 failed, 1 isolate restart"
expect_in limit.out "since its isolate's re-creation #1"
[ -s final.json ] || fail "no final.json at exit"

# Without --leaks: the endpoints say why, the index has no leaks link.
start_serve plain "$limited"
[ "$(status_of "$debug/debug/heapprof/leaks")" = 404 ] || fail "the leak endpoint without --leaks is not 404"
curl -s "$debug/debug/heapprof/leaks.html" >plain.txt
expect_in plain.txt "serve --leaks"
curl -s "$debug/debug/pprof/" >plain-index.html
if grep -q "leaks.html" plain-index.html; then fail "the index links a leak page without --leaks"; fi
stop_serve

# Its own flags without --leaks: refused up front (exit 2), as heapprof run refuses them.
expect_exit 2 cadence -- "$heapprof" serve "$limited" --cadence 1s --listen 127.0.0.1:0 --debug-listen off
expect_in cadence.err "belong to --leaks"
expect_exit 2 json -- "$heapprof" serve "$limited" --leaks-json x.json --listen 127.0.0.1:0 --debug-listen off
expect_in json.err "belong to --leaks"
[ ! -e x.json ] || fail "json: a JSON file was written"
finish
