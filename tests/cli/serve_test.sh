#!/usr/bin/env bash
# heapprof serve as users drive it: curl reaches the worker on its replicas,
# go tool pprof fetches /debug/pprof/heap?seconds=2 over HTTP and names the
# leaking function, overlapping windows on one target, the allocs, index and
# flamegraph endpoints, and SIGTERM during a window (the window is delivered,
# requests in flight are answered, exit 0).
#   serve_test.sh <heapprof> <source dir> <work dir>
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
source "$here/lib.sh"
# shellcheck source=serve_lib.sh
source "$here/serve_lib.sh"
# shellcheck source=../pprof_readers/go_env.sh
source "$src/tests/pprof_readers/go_env.sh"
go_env "$work/go"
command -v curl >/dev/null || { echo "curl is not installed" >&2; exit 1; }

start_serve serve "$examples/prometheus-leak.js" --replicas 2 --interval 64KiB
trap 'kill -9 $serve_pid 2>/dev/null || true' EXIT

# --- requests reach the worker, routed by header, by path prefix, else round-robin
curl -s -D rr1.h -o /dev/null "$base/api/users/1"
curl -s -D rr2.h -o /dev/null "$base/api/users/2"
expect_in rr1.h "HTTP/1.1 200"
cat rr1.h rr2.h | grep -i '^x-heapprof-replica' | sort -u >rr.names
[ "$(wc -l <rr.names)" -eq 2 ] || fail "round-robin did not use both replicas: $(cat rr.names)"
curl -s -D byheader.h -o /dev/null -H 'X-Heapprof-Replica: prometheus-leak-1' "$base/api/users/3"
expect_in byheader.h "X-Heapprof-Replica: prometheus-leak-1"
curl -s -D bynumber.h -o /dev/null -H 'X-Heapprof-Replica: 0' "$base/api/users/3"
expect_in bynumber.h "X-Heapprof-Replica: prometheus-leak-0"
curl -s -D byprefix.h -o /dev/null "$base/@1/api/users/4"
expect_in byprefix.h "HTTP/1.1 200"
expect_in byprefix.h "X-Heapprof-Replica: prometheus-leak-1"
# A replica's name as printed goes into a URL as it is, no escaping.
curl -s -D byname.h -o /dev/null "$base/@$(sed -n 's/^X-Heapprof-Replica: //p' byprefix.h | tr -d '\r')/api/users/4"
expect_in byname.h "HTTP/1.1 200"
expect_in byname.h "X-Heapprof-Replica: prometheus-leak-1"
[ "$(status_of "$base/@7/api/users/4")" = 404 ] || fail "an unknown replica prefix is not 404"
# HEAD: headers only, so the next request on the same connection parses.
curl -s -I "$base/@0/api/users/[1-2]" >head.txt
[ "$(grep -c '^HTTP/1.1 200' head.txt)" = 2 ] || fail "two HEAD requests on one connection: $(cat head.txt)"
expect_in head.txt "Content-Length: "
[ "$(status_of -X POST --data '{"a":1}' "$base/api/orders")" != 000 ] || fail "a POST got no answer"

# --- go tool pprof over HTTP names the leak while traffic flows to replica 0
curl -s -o /dev/null "$base/@0/api/users/[1-400000]" &
load=$!
trap 'kill -9 $serve_pid $load 2>/dev/null || true' EXIT
sleep 0.5
go tool pprof -top "$debug/debug/pprof/heap?seconds=2&target=0" >heap.top 2>heap.err || fail "go tool pprof failed: $(cat heap.err)"
expect_in heap.top "Type: inuse_space"
expect_in heap.top "isolate: prometheus-leak-0"
first="$(awk '/flat%/ {getline; print $NF; exit}' heap.top)"
[ "$first" = "observe" ] || fail "the top in-use function is '$first', not observe"

# allocs: the same kind of window, alloc_space first; replica 1 by name.
go tool pprof -top "$debug/debug/pprof/allocs?seconds=1&target=prometheus-leak-0" >allocs.top 2>allocs.err ||
  fail "go tool pprof (allocs) failed: $(cat allocs.err)"
expect_in allocs.top "Type: alloc_space"
go tool pprof -sample_index=alloc_objects -top "$debug/debug/pprof/allocs?seconds=1&target=0" >objects.top 2>&1 ||
  fail "the allocs profile lacks alloc_objects"

# The interactive flamegraph page of a window.
curl -s "$debug/debug/heapprof/flamegraph?seconds=1&target=0" >flame.html
expect_in flame.html "<html"
expect_in flame.html "observe"

# Windows on one target overlap (they are id ranges of its always-on sampler):
# a second request while one is open is answered too (it was 409 before).
curl -s -o held.pb.gz "$debug/debug/pprof/heap?seconds=3&target=0" &
holder=$!
sleep 1
code="$(curl -s -o second.pb.gz -w '%{http_code}' "$debug/debug/pprof/heap?seconds=1&target=prometheus-leak-0")"
[ "$code" = 200 ] || fail "a second, overlapping window on one target got $code, not 200: $(head -c 300 second.pb.gz)"
"$heapprof" top second.pb.gz -n 1 >second.top || fail "the overlapping window is not a readable profile"
expect_in second.top "observe"
[ "$(status_of "$debug/debug/pprof/heap?seconds=1&target=1")" = 200 ] || fail "the other replica could not be profiled meanwhile"
wait "$holder" || fail "the first of two overlapping windows failed"
"$heapprof" top held.pb.gz -n 1 >held.top || fail "the held window is not a readable profile"
expect_in held.top "observe"
kill "$load" 2>/dev/null || true
wait "$load" 2>/dev/null || true

# Bad requests: clear 4xx, never a crash.
[ "$(status_of "$debug/debug/pprof/heap?seconds=1")" = 400 ] || fail "no target among two is not 400"
[ "$(status_of "$debug/debug/pprof/heap?seconds=1&target=nobody")" = 404 ] || fail "an unknown target is not 404"
[ "$(status_of "$debug/debug/pprof/heap?seconds=-3&target=0")" = 400 ] || fail "negative seconds are not 400"
[ "$(status_of "$debug/debug/pprof/heap?target=0")" = 400 ] || fail "no seconds without --continuous is not 400"
[ "$(status_of "$debug/debug/pprof/heap?seconds=1&target=%zz")" = 400 ] || fail "a bad escape is not 400"
[ "$(status_of "$debug/nothing")" = 404 ] || fail "an unknown debug path is not 404"

# The index names both targets with their heap use; the flamegraph is a page.
curl -s "$debug/debug/pprof/" >index.html
expect_in index.html "prometheus-leak-0"
expect_in index.html "prometheus-leak-1"
expect_in index.html "MiB"

# --- SIGTERM during a window: the window is delivered, traffic in flight is answered.
curl -s -o term.pb.gz -w '%{http_code}' "$debug/debug/pprof/heap?seconds=60&target=0" >term.code &
window=$!
curl -s -o /dev/null "$base/@1/api/users/[1-100000]" &
load=$!
sleep 1
stop_serve
wait "$window" || true
[ "$(cat term.code)" = 200 ] || fail "the window open at SIGTERM got $(cat term.code), not 200"
"$heapprof" top term.pb.gz -n 1 >term.top || fail "the window cut short by SIGTERM is not a readable profile"
wait "$load" || true  # its requests after the stop find the port closed
expect_in serve.out "prometheus-leak-0: served"
expect_in serve.out "prometheus-leak-1: served"

# --- --continuous: heap without seconds= returns what the open window has seen
# and opens the next; at SIGTERM the last window is written to --output-dir.
mkdir -p continuous
start_serve cont "$examples/prometheus-leak.js" --continuous --output-dir continuous --interval 64KiB
curl -s -o /dev/null "$base/api/users/[1-3000]"
go tool pprof -top "$debug/debug/pprof/heap" >cont.top 2>cont.err || fail "go tool pprof (continuous) failed: $(cat cont.err)"
first="$(awk '/flat%/ {getline; print $NF; exit}' cont.top)"
[ "$first" = "observe" ] || fail "the continuous window's top in-use function is '$first', not observe"
[ "$(status_of "$debug/debug/pprof/heap?seconds=1")" = 409 ] || fail "seconds= while the continuous window holds the target is not 409"
curl -s -o /dev/null "$base/api/users/[5000-6000]"
stop_serve
expect_in cont.out "(the continuous window)"
last="$(ls continuous | head -n1)"
[ -n "$last" ] || fail "no continuous window was written at SIGTERM"
[ -z "$last" ] || "$heapprof" top "continuous/$last" -n 1 >last.top || fail "the last continuous window is not a readable profile"
trap - EXIT
finish
