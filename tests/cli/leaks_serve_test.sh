#!/usr/bin/env bash
# heapprof serve --leaks beside the page's browser test: a replica whose
# isolate is recreated at the heap limit starts a new leak session (the old
# sampler's ids are gone with its isolate) and its report says so; the leak
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

# ~10 KiB kept a request reaches --heap-limit 32 after ~2600 requests: the replica is recreated.
start_serve limit "$limited" --leaks --cadence 20ms --heap-limit 32 --leaks-json final.json
trap 'kill -9 $serve_pid 2>/dev/null || true' EXIT
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
