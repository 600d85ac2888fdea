#!/usr/bin/env bash
# heapprof serve profiles one Durable Object live: of two objects of one class
# (tests/cli/data/durable_objects: the worker calls STORES:leaky and
# STORES:quiet in turn), each is a target of its own isolate on
# /debug/pprof/ (heap use, requests, restarts), and go tool pprof's windows
# on them, open at once while traffic flows, name the leak in the leaky one
# only; the load to the other object meanwhile fails no request. An object
# that does not exist is a 404 naming the targets there are; a named object
# is a target by its 64-hex id too; with --object-idle-limit an evicted
# object is made anew, counted as a restart.
#   serve_objects_test.sh <heapprof> <source dir> <work dir>
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
source "$here/lib.sh"
# shellcheck source=serve_lib.sh
source "$here/serve_lib.sh"
# shellcheck source=../pprof_readers/go_env.sh
source "$src/tests/pprof_readers/go_env.sh"
go_env "$work/go"
command -v curl >/dev/null || { echo "curl is not installed" >&2; exit 1; }
app="$src/tests/cli/data/durable_objects"

# object_counts <index.html> <target>: "<requests> <restarts>" of the target's row, or nothing.
object_counts() {
  sed -n "s|.*<tr><td>$2</td><td>[^<]*</td><td>[^<]*</td><td>\([0-9]*\)</td><td>[0-9]*</td><td>\([0-9]*\)</td>.*|\1 \2|p" "$1"
}

start_serve serve "$app" --interval 16KiB
trap 'kill -9 $serve_pid 2>/dev/null || true' EXIT

# Objects are made at their first call: the first request reaches leaky, the second quiet.
[ "$(status_of "$base/")" = 200 ] || fail "the first request failed"
code="$(curl -s -o early.txt -w '%{http_code}' --max-time 60 "$debug/debug/pprof/heap?seconds=1&target=STORES:quiet")"
[ "$code" = 404 ] || fail "a window on an object not made yet got $code, not 404"
[ "$(status_of "$base/")" = 200 ] || fail "the second request failed"
curl -s --max-time 60 "$debug/debug/pprof/" >index.html
[ -n "$(object_counts index.html STORES:leaky)" ] || fail "the index lists no STORES:leaky: $(cat index.html)"
[ -n "$(object_counts index.html STORES:quiet)" ] || fail "the index lists no STORES:quiet: $(cat index.html)"
expect_in index.html "heap?seconds=10&amp;target=STORES%3Aleaky"

# An unknown object: 404 naming the targets there are.
code="$(curl -s -o unknown.txt -w '%{http_code}' --max-time 60 "$debug/debug/pprof/heap?seconds=1&target=STORES:nobody")"
[ "$code" = 404 ] || fail "an unknown object target got $code, not 404"
expect_in unknown.txt "no target named STORES:nobody (the targets are "
expect_in unknown.txt "STORES:leaky"
expect_in unknown.txt "STORES:quiet"

# By its 64-hex id (workerd's for the unique key "do-profiles-Store"), upper case.
hex="$(node -e '
  const c = require("crypto");
  const key = c.createHash("sha256").update("do-profiles-Store").digest();
  const first = c.createHmac("sha256", key).update("leaky").digest().subarray(0, 16);
  const last = c.createHmac("sha256", key).update(first).digest().subarray(0, 16);
  console.log(Buffer.concat([first, last]).toString("hex").toUpperCase());')"
curl -s -D by-id.h -o by-id.pb.gz --max-time 60 "$debug/debug/pprof/heap?seconds=200ms&target=STORES:$hex"
expect_in by-id.h "HTTP/1.1 200"
expect_in by-id.h "X-Heapprof-Target: STORES:leaky"

# Traffic to both objects, one request after another; both windows at once.
curl -s -o /dev/null -w '%{http_code}\n' "$base/r/[1-1000000]" >load.codes &
load=$!
trap 'kill -9 $serve_pid $load 2>/dev/null || true' EXIT
sleep 0.5
curl -s --max-time 60 "$debug/debug/pprof/" >before.html
go tool pprof -top -sample_index=inuse_space "$debug/debug/pprof/heap?seconds=4&target=STORES:leaky" \
  >leaky.top 2>leaky.err &
leaky=$!
go tool pprof -top -sample_index=inuse_space "$debug/debug/pprof/heap?seconds=4&target=STORES:quiet" \
  >quiet.top 2>quiet.err || fail "go tool pprof (quiet) failed: $(cat quiet.err)"
wait "$leaky" || fail "go tool pprof (leaky) failed: $(cat leaky.err)"
curl -s --max-time 60 "$debug/debug/pprof/" >after.html
kill "$load" 2>/dev/null || true
wait "$load" 2>/dev/null || true

expect_in leaky.top "isolate: STORES:leaky"
read -r leak_flat _ <<<"$(pprof_shares leaky.top leakRecord)"
awk -v v="$leak_flat" 'BEGIN { exit !(v >= 60) }' || fail "leakRecord holds $leak_flat % of STORES:leaky's in-use bytes (expected >= 60 %)"
expect_in quiet.top "isolate: STORES:quiet"
read -r _ quiet_cum <<<"$(pprof_shares quiet.top leakRecord)"
awk -v v="$quiet_cum" 'BEGIN { exit !(v <= 5) }' || fail "leakRecord holds $quiet_cum % of STORES:quiet's in-use bytes (expected <= 5 %)"
# The objects served on during their windows, and no request failed.
read -r quiet_before _ <<<"$(object_counts before.html STORES:quiet)"
read -r quiet_after _ <<<"$(object_counts after.html STORES:quiet)"
[ "$((quiet_after - quiet_before))" -ge 10 ] ||
  fail "STORES:quiet got $((quiet_after - quiet_before)) calls during the windows (expected >= 10)"
[ "$(grep -c '^200$' load.codes)" -ge 20 ] || fail "only $(grep -c '^200$' load.codes) requests answered 200 during the windows"
[ "$(grep -vc '^200$' load.codes)" = 0 ] || fail "requests failed during the windows: $(sort load.codes | uniq -c)"
stop_serve

# --object-idle-limit: requests come more than 1 ms apart, so each object is
# evicted before the other's call and made anew at its own: restarts count.
start_serve idle "$app" --interval 16KiB --object-idle-limit 1ms
for i in 1 2 3 4 5 6; do
  [ "$(status_of "$base/")" = 200 ] || fail "request $i with --object-idle-limit failed"
  sleep 0.05
done
sleep 0.8  # the index's counts are refreshed every 500 ms
curl -s --max-time 60 "$debug/debug/pprof/" >idle.html
read -r idle_requests idle_restarts <<<"$(object_counts idle.html STORES:quiet)"
[ "${idle_requests:-0}" = 3 ] || fail "STORES:quiet counts ${idle_requests:-no} requests (expected 3): $(cat idle.html)"
[ "${idle_restarts:-0}" -ge 1 ] || fail "STORES:quiet counts ${idle_restarts:-no} restarts with --object-idle-limit 1ms"
stop_serve
trap - EXIT

finish
