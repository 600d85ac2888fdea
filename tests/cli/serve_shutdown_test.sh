#!/usr/bin/env bash
# heapprof serve's shutdown with requests that never end (--request-timeout 0,
# a loop and an endless chain of microtasks) and one queued behind them:
# SIGTERM or Ctrl-C still ends the process, after --shutdown-timeout, with
# exit 0; the running requests are terminated and the queued one never runs,
# all answered 503, and stderr names what was pending on which replica. A
# process still alive 30 s after the signal fails the test (and is killed).
#   serve_shutdown_test.sh <heapprof> <source dir> <work dir>
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
source "$here/lib.sh"
# shellcheck source=serve_lib.sh
source "$here/serve_lib.sh"

cat >endless.js <<'JS'
export default {
  async fetch(request) {
    const path = new URL(request.url).pathname;
    if (path === '/spin') for (;;) {}
    if (path === '/microtasks') for (;;) await null;
    return new Response('ok ' + path);
  },
};
JS

# 0 means no limit, and the help says so.
"$heapprof" serve --help >help.txt
expect_in help.txt "0 = no limit"
expect_in help.txt "--shutdown-timeout"

# stop_within <signal> <seconds>: signals $serve_pid and waits for its exit
# code (in $stopped_code); a process still running then is a hang.
stop_within() {
  kill -"$1" "$serve_pid"
  local i
  for i in $(seq 1 $(($2 * 10))); do
    kill -0 "$serve_pid" 2>/dev/null || break
    sleep 0.1
  done
  if kill -0 "$serve_pid" 2>/dev/null; then
    fail "heapprof serve still runs $2 s after SIG$1 (a hang); killed"
    kill -9 "$serve_pid"
  fi
  stopped_code=0
  wait "$serve_pid" || stopped_code=$?
}

# ask <name> <url>: a request in the background; its status in <name>.code, body in <name>.body.
ask() {
  curl -s -o "$1.body" -w '%{http_code}' --max-time 60 "$2" >"$1.code" &
  asked+=($!)
}

# --- SIGTERM: two replicas, each running an endless request; one more queued on replica 0.
start_serve term endless.js --replicas 2 --request-timeout 0 --shutdown-timeout 1s
trap 'kill -9 $serve_pid 2>/dev/null || true' EXIT
[ "$(status_of "$base/@0/alive")" = 200 ] || fail "replica 0 does not serve"
asked=()
ask spin "$base/@0/spin"
ask microtasks "$base/@1/microtasks"
sleep 0.5
ask queued "$base/@0/queued"
sleep 0.5
stop_within TERM 30
[ "$stopped_code" -eq 0 ] || fail "SIGTERM: exit code $stopped_code, expected 0"
wait "${asked[@]}" || true
for r in spin microtasks; do
  [ "$(cat $r.code)" = 503 ] || fail "the endless request $r got $(cat $r.code), not 503"
  expect_in $r.body "the service shut down while this request was still running, and terminated it"
done
[ "$(cat queued.code)" = 503 ] || fail "the queued request got $(cat queued.code), not 503"
expect_in queued.body "the service shut down before this request ran"
expect_in term.err "SIGTERM: finishing the requests in flight (for at most 1.0 s)"
expect_in term.err "endless-0: pending after the 1.0 s shutdown timeout: a request still running (for "
expect_in term.err "was terminated; 1 queued request never ran; answered 503"
expect_in term.err "endless-1: pending after the 1.0 s shutdown timeout: a request still running (for "
expect_in term.out "endless-0: served 1 requests, 1 failed"

# --- Ctrl-C (SIGINT), one replica, the default shutdown timeout.
start_serve int endless.js --request-timeout 0
asked=()
ask spin-int "$base/spin"
sleep 0.5
stop_within INT 30
[ "$stopped_code" -eq 0 ] || fail "SIGINT: exit code $stopped_code, expected 0"
wait "${asked[@]}" || true
[ "$(cat spin-int.code)" = 503 ] || fail "the endless request got $(cat spin-int.code) at SIGINT, not 503"
expect_in int.err "endless: pending after the 10.0 s shutdown timeout: a request still running (for "

# --- Nothing pending: no such message.
start_serve idle endless.js --request-timeout 0
[ "$(status_of "$base/ok")" = 200 ] || fail "the idle service does not serve"
stop_within TERM 30
[ "$stopped_code" -eq 0 ] || fail "idle SIGTERM: exit code $stopped_code, expected 0"
grep -q "pending after" idle.err && fail "an idle shutdown reported pending requests: $(cat idle.err)"

# A bad --shutdown-timeout is refused.
expect_exit 2 bad-timeout -- "$heapprof" serve endless.js --shutdown-timeout 0
expect_in bad-timeout.err "--shutdown-timeout"
trap - EXIT
finish
