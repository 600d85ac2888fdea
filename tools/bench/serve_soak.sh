#!/usr/bin/env bash
# heapprof serve soaked: wrk load on two replicas for a long time (30 minutes;
# 1 with --quick) while, at once,
#   - a scraper takes 1 s windows on alternating replicas and checks that every
#     profile parses (a lost profile is a window answered 200 that does not);
#   - replicas restart: a request that runs past --request-timeout and one
#     that exhausts --heap-limit, every 10 s;
#   - hostile clients: windows abandoned mid-way (curl -m), no or a wrong
#     token, oversized headers and request lines, unfinished 15 MiB bodies,
#     idle connections held open, windows in a loop past the per-client rate;
# and samples the service's RSS and open descriptors every 5 s. Flat means
# the last fifth of the samples is within 10 % (RSS) and 8 descriptors of the
# second fifth (the first is the warm-up). Prints a summary and writes JSON.
#   serve_soak.sh <heapprof> [--quick] [--minutes N] [--json FILE]
set -euo pipefail
heapprof="$1"
shift
minutes=30 json=""
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) minutes=1 ;;
    --minutes) minutes="$2"; shift ;;
    --json) json="$2"; shift ;;
    *) echo "usage: serve_soak.sh <heapprof> [--quick] [--minutes N] [--json FILE]" >&2; exit 2 ;;
  esac
  shift
done
# shellcheck source=tools/bench/load_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/load_lib.sh"
seconds=$((minutes * 60))

cat >"$tmp/soak.js" <<'JS'
let kept = [];
export default {
  async fetch(request) {
    const path = new URL(request.url).pathname;
    if (path === '/hoard') { const all = []; for (;;) all.push(new Array(100000).fill(path)); }
    if (path === '/loop') { for (;;) {} }
    kept.push({ path, at: Date.now() });
    if (kept.length > 2000) kept = [];
    return new Response(JSON.stringify({ kept: kept.length }), { headers: { 'content-type': 'application/json' } });
  },
};
JS
cat >"$tmp/tokens.txt" <<'TOK'
scraper  scraper-0123456789abcdef  *
hostile  hostile-0123456789abcdef  soak-1
TOK

"$heapprof" serve "$tmp/soak.js" --replicas 2 --request-timeout 2s --heap-limit 32 --listen 127.0.0.1:0 \
  --debug-listen 127.0.0.1:0 --debug-token-file "$tmp/tokens.txt" --debug-windows-per-minute 120 \
  >"$tmp/serve.out" 2>"$tmp/serve.err" &
serve_pid=$!
pids+=("$serve_pid")
for _ in $(seq 1 300); do grep -q "/debug/pprof/, e.g." "$tmp/serve.out" 2>/dev/null && break; sleep 0.1; done
base="$(sed -n 's|^heapprof serve: .* on \(http://[0-9.:]*\)/ (.*|\1|p' "$tmp/serve.out")"
debug="$(sed -n 's|^heapprof serve: profiles on \(http://[0-9.:]*\)/debug/pprof/.*|\1|p' "$tmp/serve.out")"
[ -n "$base" ] && [ -n "$debug" ] || { cat "$tmp/serve.err" >&2; echo "heapprof serve did not start" >&2; exit 1; }
end=$((SECONDS + seconds))
scraper=(-H 'Authorization: Bearer scraper-0123456789abcdef')
hostile=(-H 'Authorization: Bearer hostile-0123456789abcdef')

wrk -t2 -c16 -d"${seconds}s" "$base/api" >"$tmp/wrk.txt" 2>&1 &
pids+=("$!")

# The scraper: every window must come back as a profile.
(
  ok=0 lost=0 other=0 t=0
  while [ $SECONDS -lt $end ]; do
    code="$(curl -s -o "$tmp/w.pb.gz" -w '%{http_code}' --max-time 30 "${scraper[@]}" \
      "$debug/debug/pprof/heap?seconds=1&target=$t" || true)"
    if [ "$code" = 200 ]; then
      if "$heapprof" top "$tmp/w.pb.gz" >/dev/null 2>&1; then ok=$((ok + 1)); else lost=$((lost + 1)); fi
    else
      other=$((other + 1))  # e.g. the replica restarted during the window
    fi
    t=$((1 - t))
  done
  echo "$ok $lost $other" >"$tmp/scraper.txt"
) &
pids+=("$!")

# Restarts.
(
  n=0
  while [ $SECONDS -lt $end ]; do
    curl -s -o /dev/null --max-time 10 -H 'X-Heapprof-Replica: 1' "$base/loop" || true
    curl -s -o /dev/null --max-time 10 -H 'X-Heapprof-Replica: 1' "$base/hoard" || true
    n=$((n + 2))
    sleep 10
  done
  echo "$n" >"$tmp/restarts.txt"
) &
pids+=("$!")

# Hostile clients, one kind after another.
python3 - "$base" "$debug" "$end" "$SECONDS" >"$tmp/hostile.txt" <<'PY' &
import socket, sys, time
base, debug, end, now = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
deadline = time.time() + (end - now)
def hp(url):
    host, port = url.split("//")[1].split(":")
    return host, int(port)
def ask(url, raw, wait=2.0, half_close=True):
    s = socket.create_connection(hp(url))
    s.settimeout(wait)
    try:
        s.sendall(raw)
        if half_close: s.shutdown(socket.SHUT_WR)
        got = s.recv(64)
        return got[9:12].decode() if got.startswith(b"HTTP/1.1 ") else "closed"
    except OSError:
        return "closed"
    finally:
        s.close()
codes = {}
def count(kind, code):
    codes.setdefault(kind, {}).setdefault(code, 0)
    codes[kind][code] += 1
tok = b"Authorization: Bearer hostile-0123456789abcdef\r\n"
idle = []
while time.time() < deadline:
    # A window abandoned after 0.3 s.
    s = socket.create_connection(hp(debug))
    s.sendall(b"GET /debug/pprof/heap?seconds=60&target=1 HTTP/1.1\r\nHost: x\r\n" + tok + b"\r\n")
    time.sleep(0.3)
    s.close()
    count("abandoned window", "sent")
    count("no token", ask(debug, b"GET /debug/pprof/ HTTP/1.1\r\nHost: x\r\n\r\n"))
    count("other target", ask(debug, b"GET /debug/pprof/heap?seconds=1&target=0 HTTP/1.1\r\nHost: x\r\n" + tok + b"\r\n"))
    count("big header", ask(base, b"GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 20000 + b"\r\n\r\n"))
    count("long line", ask(base, b"GET /" + b"a" * 9000 + b" HTTP/1.1\r\nHost: x\r\n\r\n"))
    bodies = []
    for _ in range(8):
        b = socket.create_connection(hp(base))
        b.settimeout(0.05)
        try:
            b.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % (15 << 20))
            for _ in range(10): b.sendall(b"x" * (1 << 20))
        except OSError:
            pass
        bodies.append(b)
    time.sleep(0.5)
    for b in bodies: b.close()
    count("unfinished 15 MiB bodies", "sent 8")
    for _ in range(10):
        count("windows in a loop", ask(debug, b"GET /debug/pprof/heap?seconds=100ms&target=1 HTTP/1.1\r\nHost: x\r\n"
                                       b"Connection: close\r\n" + tok + b"\r\n", half_close=False))
    idle.append(socket.create_connection(hp(base)))
    if len(idle) > 50:
        for i in idle: i.close()
        idle = []
    time.sleep(1)
for i in idle: i.close()
print(repr(codes))
PY
pids+=("$!")

# Samples: seconds, RSS in MB, open descriptors.
: >"$tmp/samples.txt"
while [ $SECONDS -lt $end ]; do
  rss="$(awk '/^VmRSS/ {print int($2 / 1024)}' "/proc/$serve_pid/status")"
  fds="$(ls "/proc/$serve_pid/fd" | wc -l)"
  echo "$((seconds - (end - SECONDS))) $rss $fds" >>"$tmp/samples.txt"
  sleep 5
done
wait "${pids[@]:1}" 2>/dev/null || true
sleep 2
rss="$(awk '/^VmRSS/ {print int($2 / 1024)}' "/proc/$serve_pid/status")"
fds="$(ls "/proc/$serve_pid/fd" | wc -l)"
echo "$seconds $rss $fds" >>"$tmp/samples.txt"
kill -TERM "$serve_pid"
code=0
wait "$serve_pid" || code=$?

read -r ok lost other <"$tmp/scraper.txt"
restarts="$(cat "$tmp/restarts.txt")"
python3 - "$tmp" "$minutes" "$ok" "$lost" "$other" "$restarts" "$code" "${json:-}" <<'PY'
import ast, json, re, sys
tmp, minutes, ok, lost, other, restarts, code, out = sys.argv[1:9]
samples = [tuple(map(int, l.split())) for l in open(f"{tmp}/samples.txt") if l.strip()]
n = len(samples)
fifth = max(1, n // 5)
second = samples[fifth:2 * fifth] or samples[:1]
last = samples[-fifth:]
mean = lambda xs: sum(xs) / len(xs)
rss2, rssl = mean([s[1] for s in second]), mean([s[1] for s in last])
fd2, fdl = mean([s[2] for s in second]), mean([s[2] for s in last])
wrk = open(f"{tmp}/wrk.txt").read()
rps = re.search(r"Requests/sec:\s+([\d.]+)", wrk)
non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", wrk)
errors = re.search(r"Socket errors: (.*)", wrk)
hostile = ast.literal_eval(open(f"{tmp}/hostile.txt").read().strip() or "{}")
result = {
    "minutes": int(minutes), "requests_per_second": float(rps.group(1)) if rps else None,
    "wrk_non_2xx": int(non2xx.group(1)) if non2xx else 0, "wrk_socket_errors": errors.group(1) if errors else "none",
    "windows_ok": int(ok), "windows_lost": int(lost), "windows_not_200": int(other), "restart_requests": int(restarts),
    "rss_mb": {"max": max(s[1] for s in samples), "second_fifth": rss2, "last_fifth": rssl},
    "fds": {"max": max(s[2] for s in samples), "second_fifth": fd2, "last_fifth": fdl},
    "rss_flat": rssl <= rss2 * 1.10 + 1, "fds_flat": fdl <= fd2 + 8, "hostile": hostile, "serve_exit": int(code),
}
print(f"soak {minutes} min: {result['requests_per_second']} req/s under wrk, {result['wrk_non_2xx']} non-2xx "
      f"(restarts and refusals), socket errors {result['wrk_socket_errors']}")
print(f"  windows: {ok} profiles, {lost} lost, {other} not 200; {restarts} restarting requests")
print(f"  RSS {rss2:.0f} -> {rssl:.0f} MB (max {result['rss_mb']['max']}): {'flat' if result['rss_flat'] else 'GROWING'}; "
      f"descriptors {fd2:.0f} -> {fdl:.0f} (max {result['fds']['max']}): {'flat' if result['fds_flat'] else 'GROWING'}")
for kind, got in hostile.items(): print(f"  hostile: {kind}: {got}")
print(f"  serve exit code after SIGTERM: {code}")
if out: open(out, "w").write(json.dumps(result, indent=2) + "\n")
PY
