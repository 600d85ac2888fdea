#!/usr/bin/env bash
# heapprof serve under a real load generator (wrk) on loopback, three rows,
# each a ratio against a baseline measured in the same run:
#   - requests/s and p99 latency with a profiling window open vs none;
#   - heapprof serve vs workerd serving the same worker (requests/s);
#   - workerd with a `heapprof attach` window open (DevTools protocol,
#     include-collected sampling) vs none, beside the embedded host's ratio.
# The phases alternate (none, window, workerd, none, window, workerd...) and
# each row takes the median of its rounds, so drift on a busy machine hits
# both sides alike.
#   serve_bench.sh <heapprof> <worker.js> <workerd or ""> [--quick] [--json FILE]
set -euo pipefail
heapprof="$1" worker="$2" workerd="$3"
shift 3
quick="" json=""
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1 ;;
    --json) json="$2"; shift ;;
    *) echo "usage: serve_bench.sh <heapprof> <worker.js> <workerd> [--quick] [--json FILE]" >&2; exit 2 ;;
  esac
  shift
done
if [ -n "$quick" ]; then seconds=3 rounds=1; else seconds=8 rounds=3; fi
connections=16
# shellcheck source=tools/bench/load_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/load_lib.sh"


# wrk for $seconds against $1: prints "<requests/s> <p99 ms>".
load() {
  wrk -t2 -c"$connections" -d"${seconds}s" --latency "$1" >"$tmp/wrk.txt"
  if grep -q "Non-2xx\|Socket errors" "$tmp/wrk.txt"; then
    echo "$1 did not answer every request with 2xx:" >&2
    cat "$tmp/wrk.txt" >&2
    exit 1
  fi
  awk '
    /Requests\/sec:/ { rps = $2 }
    $1 == "99%" { v = $2; unit = v; sub(/[0-9.]+/, "", unit); sub(/[a-z]+$/, "", v);
                  p99 = unit == "us" ? v / 1000 : unit == "s" ? v * 1000 : v }
    END { printf "%.0f %.3f\n", rps, p99 }' "$tmp/wrk.txt"
}

port="$(free_port)" debug_port="$(free_port)"
"$heapprof" serve "$worker" --listen "127.0.0.1:$port" --debug-listen "127.0.0.1:$debug_port" >"$tmp/serve.out" 2>&1 &
pids+=($!)
url="http://127.0.0.1:$port/api/users/42"
wait_http "$url"

wd_url=""
if [ -n "$workerd" ] && [ -x "$workerd" ]; then
  wd_port="$(free_port)" wd_inspector="$(free_port)"
  config="$(node "$(dirname "${BASH_SOURCE[0]}")/../workerd_config.mjs" --dir "$tmp/workerd-config" --script "$worker" \
    --module-name worker.js --address "127.0.0.1:$wd_port")"
  # The inspector is on in every workerd phase, so only the window differs.
  "$workerd" serve "$config" --inspector-addr="127.0.0.1:$wd_inspector" >"$tmp/workerd.out" 2>&1 &
  pids+=($!)
  wd_url="http://127.0.0.1:$wd_port/api/users/42"
  wait_http "$wd_url"
else
  echo "(no workerd binary: the heapprof serve vs workerd row is skipped)"
fi

# Warm both up, then alternate the phases.
wrk -t2 -c"$connections" -d1s "$url" >/dev/null
[ -n "$wd_url" ] && wrk -t2 -c"$connections" -d1s "$wd_url" >/dev/null
: >"$tmp/none" ; : >"$tmp/window" ; : >"$tmp/workerd" ; : >"$tmp/workerd_window"
for round in $(seq 1 "$rounds"); do
  load "$url" >>"$tmp/none"
  # A window covering the whole phase (it ends a little after wrk does).
  curl -s -o "$tmp/window.pb.gz" "http://127.0.0.1:$debug_port/debug/pprof/heap?seconds=$((seconds + 2))" &
  window=$!
  sleep 0.3
  load "$url" >>"$tmp/window"
  wait "$window"
  [ -s "$tmp/window.pb.gz" ] || { echo "the window of round $round delivered no profile" >&2; exit 1; }
  if [ -n "$wd_url" ]; then
    load "$wd_url" >>"$tmp/workerd"
    # One include-collected window (what --sample-types alloc samples) over the whole phase.
    "$heapprof" attach "127.0.0.1:$wd_inspector" --sample-types alloc --duration "$((seconds + 2))s" \
      --top 0 --no-source-maps -o "$tmp/workerd_window.pb.gz" >"$tmp/attach.out" 2>&1 &
    attach=$!
    sleep 0.5
    load "$wd_url" >>"$tmp/workerd_window"
    wait "$attach" || { echo "heapprof attach failed in round $round:" >&2; cat "$tmp/attach.out" >&2; exit 1; }
  fi
done

median() { sort -n | awk '{ v[NR] = $1 } END { print NR ? v[int((NR + 1) / 2)] : 0 }'; }
none_rps="$(cut -d' ' -f1 "$tmp/none" | median)"
none_p99="$(cut -d' ' -f2 "$tmp/none" | median)"
window_rps="$(cut -d' ' -f1 "$tmp/window" | median)"
window_p99="$(cut -d' ' -f2 "$tmp/window" | median)"
wd_rps="$(cut -d' ' -f1 "$tmp/workerd" | median)"
wd_window_rps="$(cut -d' ' -f1 "$tmp/workerd_window" | median)"
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", (b > 0 ? a / b : 0) }'; }
rps_ratio="$(ratio "$window_rps" "$none_rps")"
p99_ratio="$(ratio "$window_p99" "$none_p99")"
printf 'wrk -t2 -c%d, %d s x %d round(s), %s\n' "$connections" "$seconds" "$rounds" "$(basename "$worker")"
printf '  heapprof serve, no window:   %8d req/s  p99 %8.2f ms\n' "$none_rps" "$none_p99"
printf '  heapprof serve, window open: %8d req/s  p99 %8.2f ms   (requests/s x%s, p99 x%s)\n' \
  "$window_rps" "$window_p99" "$rps_ratio" "$p99_ratio"
wd_ratio=""
if [ -n "$wd_url" ]; then
  wd_ratio="$(ratio "$none_rps" "$wd_rps")"
  wd_window_ratio="$(ratio "$wd_window_rps" "$wd_rps")"
  printf '  workerd:                     %8d req/s               (heapprof serve / workerd: x%s)\n' "$wd_rps" "$wd_ratio"
  printf '  workerd, attach window open: %8d req/s               (requests/s x%s; heapprof serve: x%s)\n' \
    "$wd_window_rps" "$wd_window_ratio" "$rps_ratio"
fi
if [ -n "$json" ]; then
  printf '{"worker": "%s", "seconds": %d, "rounds": %d, "connections": %d, "none_rps": %s, "none_p99_ms": %s, "window_rps": %s, "window_p99_ms": %s, "window_rps_ratio": %s, "window_p99_ratio": %s, "workerd_rps": %s, "serve_vs_workerd_rps_ratio": %s, "workerd_window_rps": %s, "workerd_window_rps_ratio": %s}\n' \
    "$(basename "$worker")" "$seconds" "$rounds" "$connections" "$none_rps" "$none_p99" "$window_rps" "$window_p99" \
    "$rps_ratio" "$p99_ratio" "${wd_rps:-null}" "${wd_ratio:-null}" "${wd_window_rps:-null}" "${wd_window_ratio:-null}" >"$json"
fi
