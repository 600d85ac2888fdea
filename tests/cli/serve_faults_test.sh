#!/usr/bin/env bash
# heapprof serve under faults, each while the other replica keeps serving:
# a request stuck in a loop (terminated at the time limit, counted, the
# isolate recreated), a full request queue (503 at once), a replica crashing
# on its heap limit (503, near-limit capture kept on disk and listed, the
# isolate recreated), and SIGTERM with requests in flight (they are answered).
#   serve_faults_test.sh <heapprof> <source dir> <work dir>
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
source "$here/lib.sh"
# shellcheck source=serve_lib.sh
source "$here/serve_lib.sh"

cat >faulty.js <<'JS'
const hoard = [];
function hoardEverything() {
  for (;;) hoard.push({ pad: new Array(64).fill(hoard.length) });
}
export default {
  async fetch(request, env) {
    const path = new URL(request.url).pathname;
    if (path === '/env') return new Response(String(env.GREETING));
    if (path === '/loop') for (;;) {}
    if (path === '/hoard') hoardEverything();
    if (path === '/echo') return new Response(await request.text(), { status: 201, headers: { 'x-echo': 'yes' } });
    return new Response('ok ' + path);
  },
};
JS
mkdir -p captures
echo '{"GREETING": "hello from env"}' >env.json
start_serve serve faulty.js --env-json env.json --replicas 2 --request-timeout 2s --queue 2 --heap-limit 32 --on-heap-limit captures
trap 'kill -9 $serve_pid 2>/dev/null || true' EXIT

# Status, headers and body come back from the worker.
curl -s -D echo.h -o echo.body --data 'hello worker' "$base/echo"
expect_in echo.h "HTTP/1.1 201"
expect_in echo.h "x-echo: yes"
[ "$(cat echo.body)" = "hello worker" ] || fail "the body came back as '$(cat echo.body)'"

# Bindings reach env as in heapprof run.
[ "$(curl -s "$base/env")" = "hello from env" ] || fail "env.GREETING did not reach the worker"

# --- a stuck request and a full queue on replica 0; replica 1 serves meanwhile.
curl -s -o loop.body -w '%{http_code}' "$base/@0/loop" >loop.code &
stuck=$!
sleep 0.5
for i in 1 2 3 4; do
  curl -s -o "queued$i.body" -w '%{http_code}' "$base/@0/after$i" >"queued$i.code" &
  eval "queued$i=\$!"
done
sleep 0.3
[ "$(status_of "$base/@1/alive")" = 200 ] || fail "replica 1 did not serve while replica 0 was stuck"
wait "$stuck" || true
[ "$(cat loop.code)" = 503 ] || fail "the stuck request got $(cat loop.code), not 503"
expect_in loop.body "time limit"
expect_in loop.body "was recreated"
# shellcheck disable=SC2154  # queued1..4 are set by eval
wait "$queued1" "$queued2" "$queued3" "$queued4" || true
ok=0 refused=0
for i in 1 2 3 4; do
  case "$(cat "queued$i.code")" in
    200) ok=$((ok + 1)); expect_in "queued$i.body" "ok /after$i" ;;
    503) refused=$((refused + 1)); expect_in "queued$i.body" "queue limit" ;;
    *) fail "request $i behind the stuck one got $(cat "queued$i.code")" ;;
  esac
done
[ "$ok" -eq 2 ] && [ "$refused" -eq 2 ] || fail "behind a stuck request with --queue 2: $ok answered, $refused refused (expected 2 and 2)"
[ "$(status_of "$base/@0/fresh")" = 200 ] || fail "replica 0 did not serve after its isolate was recreated"

# --- a heap-limit crash of replica 1; replica 0 serves meanwhile. A window open on
# replica 1 across its restart is answered with what it saw, and says the window
# ended early (it was 404 "no such target" or 409 by turns, issue #36).
curl -s -D spanning.h -o spanning.pb.gz "$debug/debug/pprof/heap?seconds=60&target=1" &
spanning=$!
for _ in $(seq 1 50); do curl -s "$debug/debug/pprof/" | grep -q '<td>faulty-1</td><td>127.0.0.1</td>' && break; sleep 0.1; done
code="$(curl -s -o hoard.body -w '%{http_code}' "$base/@1/hoard")"
[ "$code" = 503 ] || fail "the request that exhausted the heap got $code, not 503"
expect_in hoard.body "heap limit"
[ "$(status_of "$base/@0/alive")" = 200 ] || fail "replica 0 stopped serving after replica 1 crashed"
[ "$(status_of "$base/@1/alive")" = 200 ] || fail "replica 1 did not serve after its isolate was recreated"
capture="$(ls captures | head -n1)"
[ -n "$capture" ] || fail "no near-heap-limit capture in captures/"
curl -s "$debug/debug/pprof/" >index.html
expect_in index.html "$capture"
curl -s -o fetched.pb.gz "$debug/debug/heapprof/captures/$capture"
"$heapprof" top fetched.pb.gz -n 3 >capture.top || fail "the listed capture is not a readable profile"
expect_in capture.top "hoardEverything"
# The capture reports the configured limit (32 MiB), not the near-limit raise (it said 65536000).
go tool pprof -raw fetched.pb.gz 2>/dev/null | grep -i "heap_limit" >capture.limit || true
expect_in capture.limit "heap_limit_bytes: 33554432"
wait "$spanning" || fail "the window spanning the restart failed"
expect_in spanning.h "HTTP/1.1 200"
expect_in spanning.h "X-Heapprof-Window-End:"
"$heapprof" top spanning.pb.gz >spanning.top 2>&1 || fail "the window spanning the restart does not parse: $(cat spanning.top)"
# The index counts each replica's failure and restart.
grep 'faulty-0' index.html | grep -q '<td>1</td><td>1</td><td><a' || fail "the index does not count replica 0's time-out"
grep 'faulty-1' index.html | grep -q '<td>1</td><td>1</td><td><a' || fail "the index does not count replica 1's crash"

# --- SIGTERM with a slow request in flight: it is answered before the exit.
curl -s -o last.body -w '%{http_code}' "$base/@1/loop" >last.code &
last=$!
sleep 0.5
stop_serve
wait "$last" || true
[ "$(cat last.code)" = 503 ] || fail "the request in flight at SIGTERM got $(cat last.code), not its 503 answer"
expect_in serve.out "faulty-0: served"
expect_in serve.out "isolate restart"
trap - EXIT
finish
