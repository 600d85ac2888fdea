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
# second fifth (the first is the warm-up). Prints RSS and descriptors at the
# start, the middle and the end, the profiles lost (windows answered 200 that
# do not parse, or never answered) and the errors nobody caused on purpose:
# wrk's socket errors and answers other than 200 (503 while replica 1
# restarts excepted), the scraper's answers other than 200 (the same 503
# excepted), a hostile request answered otherwise than its limit says, and
# serve's exit code after SIGTERM. Exits 1 when either count is not 0.
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

# wrk counting its answers by status (which replica answered 503, too); its
# timeout (10 s) above what a request waits behind one that replica 1 runs
# past --request-timeout 2s, so a timeout is an error, not the fault.
cat >"$tmp/codes.lua" <<'LUA'
local threads = {}
function setup(thread) table.insert(threads, thread) end
function init(args) codes = {} end
function response(status, headers, body)
  local key = tostring(status)
  if status ~= 200 then key = key .. "@" .. tostring(headers["X-Heapprof-Replica"]) end
  codes[key] = (codes[key] or 0) + 1
end
function done(summary, latency, requests)
  local all = {}
  for _, t in ipairs(threads) do
    for k, v in pairs(t:get("codes")) do all[k] = (all[k] or 0) + v end
  end
  local parts = {}
  for k, v in pairs(all) do table.insert(parts, k .. "=" .. v) end
  io.write("codes: " .. table.concat(parts, " ") .. "\n")
end
LUA
wrk -t2 -c16 -d"${seconds}s" --timeout 10s -s "$tmp/codes.lua" "$base/api" >"$tmp/wrk.txt" 2>&1 &
pids+=("$!")

# The scraper: every window must come back as a profile.
(
  ok=0 lost=0 other=0 t=0
  : >"$tmp/scraper_codes.txt"
  while [ $SECONDS -lt $end ]; do
    code="$(curl -s -o "$tmp/w.pb.gz" -w '%{http_code}' --max-time 30 "${scraper[@]}" \
      "$debug/debug/pprof/heap?seconds=1&target=$t" || true)"
    if [ "$code" = 200 ]; then
      if "$heapprof" top "$tmp/w.pb.gz" >/dev/null 2>&1; then ok=$((ok + 1)); else lost=$((lost + 1)); fi
    elif [ "$code" = 000 ]; then
      lost=$((lost + 1))  # no answer at all
    else
      other=$((other + 1))
      echo "$code@$t $(head -c 200 "$tmp/w.pb.gz" | tr -c '[:print:]' ' ')" >>"$tmp/scraper_codes.txt"
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
        got = b""
        while len(got) < 64:
            chunk = s.recv(64)
            if not chunk: break
            got += chunk
            while got.startswith(b"HTTP/1.1 100 Continue\r\n\r\n"): got = got[25:]  # interim answers
            if len(got) >= 12: break
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
at = {"start": samples[0], "middle": samples[n // 2], "end": samples[-1]}
wrk = open(f"{tmp}/wrk.txt").read()
rps = re.search(r"Requests/sec:\s+([\d.]+)", wrk)
total = re.search(r"(\d+) requests in", wrk)
errors = re.search(r"Socket errors: (.*)", wrk)
codes = dict(kv.split("=") for kv in (re.search(r"codes: (.*)", wrk).group(1).split() if "codes: " in wrk else []))
codes = {k: int(v) for k, v in codes.items()}
hostile = ast.literal_eval(open(f"{tmp}/hostile.txt").read().strip() or "{}")
scraper_codes = [l.split(" ", 1) for l in open(f"{tmp}/scraper_codes.txt").read().splitlines() if l]

# What the faults cause on purpose: replica 1 (soak-1) answering 503 while it
# restarts. Everything else is an error nobody caused.
deliberate = lambda key: key == "503@soak-1"
errors_list = []
if errors: errors_list.append(f"wrk socket errors: {errors.group(1)}")
for key, count in sorted(codes.items()):
    if key != "200" and not deliberate(key): errors_list.append(f"wrk: {count} x {key}")
for c, text in scraper_codes:
    status, target = c.split("@")
    if not (status == "503" and target == "1"): errors_list.append(f"scraper: {status} on target {target}: {text.strip()}")
expected = {"no token": {"401"}, "other target": {"403"}, "big header": {"431"}, "long line": {"414"},
            "windows in a loop": {"200", "429", "503"}}
for kind, got in hostile.items():
    for answer, count in got.items():
        if kind in expected and answer not in expected[kind]:
            errors_list.append(f"hostile {kind}: {count} x {answer} (expected {'/'.join(sorted(expected[kind]))})")
if int(code) != 0: errors_list.append(f"serve exited {code} after SIGTERM")
result = {
    "minutes": int(minutes), "requests_per_second": float(rps.group(1)) if rps else None,
    "requests": int(total.group(1)) if total else None, "wrk_codes": codes,
    "wrk_socket_errors": errors.group(1) if errors else "none",
    "windows_ok": int(ok), "windows_lost": int(lost), "windows_not_200": int(other), "restart_requests": int(restarts),
    "rss_mb": {"start": at["start"][1], "middle": at["middle"][1], "end": at["end"][1],
               "max": max(s[1] for s in samples), "second_fifth": rss2, "last_fifth": rssl},
    "fds": {"start": at["start"][2], "middle": at["middle"][2], "end": at["end"][2],
            "max": max(s[2] for s in samples), "second_fifth": fd2, "last_fifth": fdl},
    "rss_flat": rssl <= rss2 * 1.10 + 1, "fds_flat": fdl <= fd2 + 8, "hostile": hostile, "serve_exit": int(code),
    "lost_profiles": int(lost), "non_deliberate_errors": len(errors_list), "errors": errors_list,
}
print(f"soak {minutes} min: {result['requests']} requests, {result['requests_per_second']} req/s under wrk; "
      f"answers {codes}")
print(f"  windows: {ok} profiles, {lost} lost, {other} not 200; {restarts} restarting requests")
for name, i in (("RSS (MB)", 1), ("descriptors", 2)):
    print(f"  {name}: start {at['start'][i]} (at {at['start'][0]} s), middle {at['middle'][i]} (at {at['middle'][0]} s), "
          f"end {at['end'][i]} (at {at['end'][0]} s)")
print(f"  RSS {rss2:.0f} -> {rssl:.0f} MB (second fifth -> last, max {result['rss_mb']['max']}): "
      f"{'flat' if result['rss_flat'] else 'GROWING'}; descriptors {fd2:.0f} -> {fdl:.0f} (max {result['fds']['max']}): "
      f"{'flat' if result['fds_flat'] else 'GROWING'}")
for kind, got in hostile.items(): print(f"  hostile: {kind}: {got}")
print(f"  serve exit code after SIGTERM: {code}")
print(f"  lost profiles: {lost}; non-deliberate errors: {len(errors_list)}")
for e in errors_list[:20]: print(f"    {e}")
if out: open(out, "w").write(json.dumps(result, indent=2) + "\n")
sys.exit(0 if int(lost) == 0 and not errors_list else 1)
PY
