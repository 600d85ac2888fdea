#!/usr/bin/env bash
# heapprof serve under abuse, as issue #36 reproduced it: a window outlives
# its client, windows nobody can cancel or see, one client holding every
# target or opening windows in a loop, no tokens and no warning off loopback,
# listeners that buffered 40 unfinished 15 MiB bodies (RSS 41 -> 718 MB,
# staying at 687 MB) and spun at 100 % with no file descriptors left,
# headers closed without 431/414, durations the message did not allow, input
# echoed raw, and /@alice/ taken from a one-replica worker.
#   serve_abuse_test.sh <heapprof> <source dir> <work dir>
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
source "$here/lib.sh"
# shellcheck source=serve_lib.sh
source "$here/serve_lib.sh"
command -v curl >/dev/null || { echo "curl is not installed" >&2; exit 1; }
command -v python3 >/dev/null || { echo "python3 is not installed" >&2; exit 1; }

pids=()
trap 'kill -9 "${pids[@]}" 2>/dev/null || true' EXIT

# wait_status <want> <tries> <curl args...>: polls every 0.2 s until the status is <want>.
wait_status() {
  local want="$1" tries="$2" got=""
  shift 2
  for _ in $(seq 1 "$tries"); do
    got="$(status_of "$@")"
    [ "$got" = "$want" ] && return 0
    sleep 0.2
  done
  echo "$got"
  return 1
}

cat >echo.js <<'JS'
export default { fetch(request) { return new Response(new URL(request.url).pathname); } };
JS

# --- 1. a window ends with its client; DELETE by its holder; the index lists it
start_serve w "$examples/clean.js" --replicas 2
pids+=("$serve_pid")
curl -s -m1 -o /dev/null "$debug/debug/pprof/heap?seconds=3600&target=0" || true
curl -s -m1 -o /dev/null "$debug/debug/pprof/heap?seconds=3600&target=1" || true
for t in 0 1; do
  got="$(wait_status 200 25 "$debug/debug/pprof/heap?seconds=100ms&target=$t")" ||
    fail "target $t still held after its client left (status $got): the window outlived its client"
done
curl -s -D held.h -o held.pb.gz "$debug/debug/pprof/heap?seconds=600&target=0" &
held=$!
pids+=("$held")
for _ in $(seq 1 50); do curl -s "$debug/debug/pprof/" >index.html; grep -q '<td>clean-0</td><td>127.0.0.1</td>' index.html && break; sleep 0.1; done
expect_in index.html "<h2>Open windows</h2>"
expect_in index.html "GET /debug/pprof/heap?seconds=600&amp;target=0 from 127.0.0.1:"
expect_in index.html " UTC (in "
id="$(sed -n 's|^<tr><td>\([0-9]*\)</td><td>clean-0</td>.*|\1|p' index.html | head -1)"
[ -n "$id" ] || fail "the index names no window id"
[ "$(status_of -X DELETE "$debug/debug/heapprof/windows/$id")" = 200 ] || fail "DELETE by the holder is not 200"
wait "$held" || fail "the cancelled window's request failed"
expect_in held.h "HTTP/1.1 200"
expect_in held.h "X-Heapprof-Window: cancelled"
"$heapprof" top held.pb.gz >held.top 2>&1 || fail "the cancelled window's profile does not parse: $(cat held.top)"
[ "$(status_of -X DELETE "$debug/debug/heapprof/windows/$id")" = 404 ] || fail "an ended window can be deleted again"

# A client that half-closes after its request (shutdown(SHUT_WR), as nc -N does) keeps
# its window and gets the profile; one that half-closes and then really goes
# away frees its target within a second or so.
python3 - "${debug#http://}" >halfclose.txt <<'PY' || fail "the half-closing client: $(cat halfclose.txt)"
import socket, sys, time
host, port = sys.argv[1].rsplit(":", 1)
s = socket.create_connection((host, int(port)))
s.sendall(b"GET /debug/pprof/heap?seconds=2&target=1 HTTP/1.1\r\nHost: x\r\n\r\n")
s.shutdown(socket.SHUT_WR)
s.settimeout(30)
data = b""
while True:
    chunk = s.recv(65536)
    if not chunk: break
    data += chunk
interim = 0
while data.startswith(b"HTTP/1.1 100 Continue\r\n\r\n"):
    data, interim = data[25:], interim + 1
head, _, body = data.partition(b"\r\n\r\n")
print(head.split(b"\r\n")[0].decode(), f"after {interim} interim answers")
sys.exit(0 if head.startswith(b"HTTP/1.1 200") and body[:2] == b"\x1f\x8b" and b"cancelled" not in head else 1)
PY
expect_in halfclose.txt "HTTP/1.1 200 OK"
python3 - "${debug#http://}" <<'PY'
import socket, sys, time
host, port = sys.argv[1].rsplit(":", 1)
s = socket.create_connection((host, int(port)))
s.sendall(b"GET /debug/pprof/heap?seconds=3600&target=0 HTTP/1.1\r\nHost: x\r\n\r\n")
s.shutdown(socket.SHUT_WR)
s.settimeout(10)
s.recv(25)  # the first interim answer: the server saw the half-close and kept the window
s.close()
PY
got="$(wait_status 200 25 "$debug/debug/pprof/heap?seconds=100ms&target=0")" ||
  fail "target 0 still held after its half-closed client went away (status $got)"

# --- 6. durations and messages agree; input is escaped
for bad in 1ns 0.0001 %2B1 1.5 50ms 3601; do
  code="$(curl -s -o bad.txt -w '%{http_code}' "$debug/debug/pprof/heap?seconds=$bad&target=0")"
  [ "$code" = 400 ] || fail "seconds=$bad is $code, not 400"
  expect_in bad.txt "from 100ms to 3600s"
done
curl -s -o nul.txt "$debug/debug/pprof/heap?seconds=1%00%1b%5b2J&target=0"
if tr -d '\000\033' <nul.txt | cmp -s - nul.txt; then :; else fail "an error message carries a raw NUL or ESC"; fi
expect_in nul.txt "1\\x00\\x1b[2J"
stop_serve

# --- 1, 2. one client holds at most --debug-client-windows targets, opens at most --debug-windows-per-minute
start_serve lim "$examples/clean.js" --replicas 2 --debug-client-windows 1 --debug-windows-per-minute 4
pids+=("$serve_pid")
curl -s -o /dev/null "$debug/debug/pprof/heap?seconds=5&target=0" &
pids+=("$!")
for _ in $(seq 1 50); do curl -s "$debug/debug/pprof/" | grep -q '<td>clean-0</td><td>127.0.0.1</td>' && break; sleep 0.1; done
code="$(curl -s -D second.h -o second.txt -w '%{http_code}' "$debug/debug/pprof/heap?seconds=1&target=1")"
[ "$code" = 429 ] || fail "a second target for the same client is $code, not 429"
expect_in second.h "Retry-After: "
kill "${pids[-1]}" 2>/dev/null || true
wait_status 200 25 "$debug/debug/pprof/heap?seconds=100ms&target=1" >/dev/null || fail "the target did not come free"
n=0
for _ in 1 2 3 4 5 6; do
  code="$(curl -s -D rate.h -o /dev/null -w '%{http_code}' "$debug/debug/pprof/heap?seconds=100ms&target=1")"
  [ "$code" = 429 ] && break
  n=$((n + 1))
done
[ "$code" = 429 ] || fail "windows in a loop were never refused (429)"
expect_in rate.h "Retry-After: "
stop_serve

# --- 2. tokens: 401 without, 403 outside its targets, the index shows only its own
cat >tokens.txt <<'TOK'
# name secret targets
first  f1rst-0123456789abcdef  clean-0
admin  adm1n-0123456789abcdef  *
TOK
start_serve tok "$examples/clean.js" --replicas 2 --debug-token-file tokens.txt
pids+=("$serve_pid")
code="$(curl -s -D none.h -o /dev/null -w '%{http_code}' "$debug/debug/pprof/")"
[ "$code" = 401 ] || fail "no token is $code, not 401"
expect_in none.h "WWW-Authenticate: Bearer"
[ "$(status_of -H 'Authorization: Bearer wrong-0123456789abcdef' "$debug/debug/pprof/")" = 401 ] || fail "a wrong token is not 401"
curl -s -H 'Authorization: Bearer f1rst-0123456789abcdef' "$debug/debug/pprof/" >tok.html
expect_in tok.html "clean-0"
grep -q "clean-1" tok.html && fail "the index shows a target outside the token's"
curl -s -o forbidden.txt -w '%{http_code}' -H 'Authorization: Bearer f1rst-0123456789abcdef' \
  "$debug/debug/pprof/heap?seconds=100ms&target=1" >forbidden.code
[ "$(cat forbidden.code)" = 403 ] || fail "a target outside the token's is $(cat forbidden.code), not 403"
grep -q "clean-1" forbidden.txt && fail "the 403 names the other target"
[ "$(status_of -H 'Authorization: Bearer f1rst-0123456789abcdef' "$debug/debug/pprof/heap?seconds=100ms&target=0")" = 200 ] ||
  fail "the token's own target is not 200"
[ "$(status_of -H 'Authorization: Bearer adm1n-0123456789abcdef' "$debug/debug/pprof/heap?seconds=100ms&target=1")" = 200 ] ||
  fail "the * token cannot profile target 1"
stop_serve

# --- 2. off loopback: refused without tokens unless --debug-insecure, warned either way
expect_exit 1 open -- "$heapprof" serve "$examples/clean.js" --listen 127.0.0.1:0 --debug-listen 0.0.0.0:0
expect_in open.err "reachable from other hosts"
expect_in open.err "--debug-insecure"
for mode in insecure tokens; do
  if [ "$mode" = insecure ]; then extra=(--debug-insecure); else extra=(--debug-token-file tokens.txt); fi
  "$heapprof" serve "$examples/clean.js" --listen 127.0.0.1:0 --debug-listen 0.0.0.0:0 "${extra[@]}" >"$mode.out" 2>"$mode.err" &
  pid=$!
  pids+=("$pid")
  for _ in $(seq 1 100); do grep -q "warning" "$mode.err" 2>/dev/null && break; sleep 0.1; done
  expect_in "$mode.err" "warning: the debug listener 0.0.0.0:"
  kill -TERM "$pid"
  wait "$pid" || fail "serve with $mode exited with $?"
done

# --- 6. /@alice/ reaches a one-replica worker unless --replica-prefix
start_serve echo echo.js
pids+=("$serve_pid")
[ "$(curl -s "$base/@alice/x")" = "/@alice/x" ] || fail "/@alice/x did not reach the one-replica worker"
stop_serve
start_serve echo2 echo.js --replica-prefix
pids+=("$serve_pid")
[ "$(status_of "$base/@alice/x")" = 404 ] || fail "--replica-prefix does not take /@alice/"
[ "$(curl -s "$base/@0/x")" = "/x" ] || fail "--replica-prefix /@0/ does not reach replica 0"
stop_serve

# --- 3. header and request-line limits: 431 and 414, not a closed connection
start_serve hdr echo.js
pids+=("$serve_pid")
[ "$(status_of -H "X-Big: $(head -c 20000 /dev/zero | tr '\0' a)" "$base/")" = 431 ] || fail "a 20 KB header is not 431"
[ "$(status_of "$base/$(head -c 9000 /dev/zero | tr '\0' a)")" = 414 ] || fail "a 9 KB request line is not 414"

# --- 3. 40 unfinished 15 MiB bodies: bounded while held, memory returned after
rss() { awk '/^VmRSS/ {print int($2 / 1024)}' "/proc/$serve_pid/status"; }
port="${base##*:}"
before="$(rss)"
python3 - "$port" "$serve_pid" >burst.txt <<'PY'
import socket, sys, time
port, pid = int(sys.argv[1]), sys.argv[2]
def rss():
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("VmRSS"): return int(line.split()[1]) // 1024
socks, refused = [], 0
chunk = b"x" * (1 << 20)
for i in range(40):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % (15 << 20))
    s.settimeout(0.05)
    try:
        for _ in range(14):
            s.sendall(chunk)
    except (BrokenPipeError, ConnectionResetError, socket.timeout):
        pass
    socks.append(s)
time.sleep(1)
during = rss()
for s in socks:
    s.settimeout(0.5)
    try:
        if s.recv(64).startswith(b"HTTP/1.1 503"): refused += 1
    except OSError:
        pass
    s.close()
time.sleep(1.5)
print(during, rss(), refused)
PY
read -r during after refused <burst.txt
echo "RSS before $before MB, with 40 unfinished 15 MiB bodies $during MB, after $after MB; $refused answered 503" | tee rss.txt
[ "$during" -lt $((before + 200)) ] || fail "RSS grew from $before to $during MB with 40 unfinished bodies"
[ "$after" -lt $((before + 100)) ] || fail "RSS stayed at $after MB (from $before) after the bodies closed"
[ "$refused" -ge 30 ] || fail "only $refused of 40 connections over the buffered-bytes limit were answered 503"
[ "$(curl -s "$base/after")" = "/after" ] || fail "the worker does not answer after the burst"
stop_serve

# --- 3. no file descriptors left: accept backs off instead of spinning
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; }
prlimit --nofile=120 env --default-signal=INT "$heapprof" serve echo.js --listen 127.0.0.1:0 --debug-listen 127.0.0.1:0 >fd.out 2>fd.err &
serve_pid=$!
pids+=("$serve_pid")
for _ in $(seq 1 100); do grep -q "/debug/pprof/, e.g." fd.out 2>/dev/null && break; sleep 0.1; done
base="$(sed -n 's|^heapprof serve: .* on \(http://[0-9.:]*\)/ (.*|\1|p' fd.out)"
port="${base##*:}"
python3 - "$port" "$serve_pid" >fd.txt <<'PY'
import os, socket, sys, time
port, pid = int(sys.argv[1]), sys.argv[2]
hz = os.sysconf("SC_CLK_TCK")
def cpu():
    f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / hz
socks = [socket.create_connection(("127.0.0.1", port)) for _ in range(150)]
time.sleep(0.5)
c0, t0 = cpu(), time.time()
time.sleep(2)
share = (cpu() - c0) / (time.time() - t0)
for s in socks: s.close()
print(f"{share:.3f}")
PY
share="$(cat fd.txt)"
echo "CPU share of serve with no descriptors left: $share"
python3 -c "import sys; sys.exit(0 if float('$share') < 0.5 else 1)" || fail "the accept loop spins with no descriptors left ($share of a core)"
got="$(wait_status 200 50 "$base/x")" || fail "the listener does not answer after the descriptors came back (status $got)"
kill -TERM "$serve_pid"; wait "$serve_pid" || fail "serve under prlimit exited with $?"

finish
