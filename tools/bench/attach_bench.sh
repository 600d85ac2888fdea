#!/usr/bin/env bash
# What an exact `heapprof attach` costs its target: requests/s of a Node.js
# HTTP server (tools/bench/attach_server.mjs, started without V8 flags) and
# of workerd (examples/workers/clean.js) under wrk on loopback, before,
# during and after one attach (exact by default: inlining off, deoptimize,
# warm-up, two windows, restore and deoptimize again; workerd cannot be
# switched, so there only the windows cost). "during" covers the whole
# attach, measured in 1 s wrk slices; the slices also show how long the
# deoptimized code takes to warm up again (the first slice back within 10 %
# of "before"). Ratios against "before" of the same run.
#   attach_bench.sh <heapprof> <workerd or ""> [--quick] [--json FILE]
set -euo pipefail
heapprof="$1" workerd="$2"
shift 2
quick="" json=""
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1 ;;
    --json) json="$2"; shift ;;
    *) echo "usage: attach_bench.sh <heapprof> <workerd> [--quick] [--json FILE]" >&2; exit 2 ;;
  esac
  shift
done
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$here/../.."
if [ -n "$quick" ]; then seconds=3 window=2; else seconds=8 window=5; fi
connections=16
# shellcheck source=tools/bench/load_lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/load_lib.sh"
# rps <seconds> <url>: requests/s over that long.
rps() {
  wrk -t2 -c"$connections" -d"$1s" "$2" >"$tmp/wrk.txt"
  if grep -q "Non-2xx\|Socket errors" "$tmp/wrk.txt"; then
    echo "$2 did not answer every request with 2xx:" >&2; cat "$tmp/wrk.txt" >&2; exit 1
  fi
  awk '/Requests\/sec:/ { printf "%.0f\n", $2 }' "$tmp/wrk.txt"
}

# measure <label> <url> <inspector>: prints one JSON object.
measure() {
  local label="$1" url="$2" inspector="$3"
  wrk -t2 -c"$connections" -d2s "$url" >/dev/null  # warm
  local before during_total=0 slices=() after n=0 recovered=null
  before="$(rps "$seconds" "$url")"
  "$heapprof" attach "$inspector" --duration "${window}s" --top 0 --no-source-maps -o "$tmp/$label.pb.gz" \
    >"$tmp/$label.attach.out" 2>"$tmp/$label.attach.err" &
  local attach=$!
  while kill -0 "$attach" 2>/dev/null; do
    local r
    r="$(rps 1 "$url")"
    slices+=("$r")
    during_total=$((during_total + r))
    n=$((n + 1))
  done
  wait "$attach" || { echo "heapprof attach ($label) failed:" >&2; cat "$tmp/$label.attach.err" >&2; exit 1; }
  after="$(rps "$seconds" "$url")"
  local during=$((n > 0 ? during_total / n : 0))
  # The deoptimized code warm again: the first slice after the deoptimization back within 10 % of before.
  for i in "${!slices[@]}"; do
    if awk -v s="${slices[$i]}" -v b="$before" 'BEGIN { exit !(s >= 0.9 * b) }'; then recovered=$((i + 1)); break; fi
  done
  local exact=false
  grep -q "deoptimized it" "$tmp/$label.attach.err" && exact=true
  printf '  %-7s before %7d req/s  during %7d (x%s)  after %7d (x%s)  %s; 1 s slices during: %s\n' "$label" \
    "$before" "$during" "$(awk -v a="$during" -v b="$before" 'BEGIN { printf "%.3f", a / b }')" "$after" \
    "$(awk -v a="$after" -v b="$before" 'BEGIN { printf "%.3f", a / b }')" \
    "$([ "$exact" = true ] && echo "exact attach" || echo "attach, inlining as it runs")" "${slices[*]}" >&2
  printf '{"label": "%s", "exact": %s, "before_rps": %d, "during_rps": %d, "after_rps": %d, "during_ratio": %s, "after_ratio": %s, "slices_rps": [%s], "first_slice_within_10pct": %s}' \
    "$label" "$exact" "$before" "$during" "$after" \
    "$(awk -v a="$during" -v b="$before" 'BEGIN { printf "%.3f", a / b }')" \
    "$(awk -v a="$after" -v b="$before" 'BEGIN { printf "%.3f", a / b }')" \
    "$(IFS=,; echo "${slices[*]}")" "$recovered"
}

echo "wrk -t2 -c$connections; before/after $seconds s; attach: two windows of $window s, default warm-up" >&2
port="$(free_port)" inspector="$(free_port)"
node --inspect="127.0.0.1:$inspector" "$here/attach_server.mjs" "$port" >"$tmp/node.out" 2>&1 &
pids+=($!)
wait_http "http://127.0.0.1:$port/"
row="$(measure node "http://127.0.0.1:$port/api/items/7" "127.0.0.1:$inspector")"
results=("$row")

if [ -n "$workerd" ] && [ -x "$workerd" ]; then
  wd_port="$(free_port)" wd_inspector="$(free_port)"
  config="$(node "$root/tools/workerd_config.mjs" --dir "$tmp/workerd-config" --script "$root/examples/workers/clean.js" \
    --module-name worker.js --address "127.0.0.1:$wd_port")"
  "$workerd" serve "$config" --inspector-addr="127.0.0.1:$wd_inspector" >"$tmp/workerd.out" 2>&1 &
  pids+=($!)
  wait_http "http://127.0.0.1:$wd_port/api/users/42"
  row="$(measure workerd "http://127.0.0.1:$wd_port/api/users/42" "127.0.0.1:$wd_inspector")"
  results+=("$row")
fi
if [ -n "$json" ]; then
  (IFS=,; echo "{\"seconds\": $seconds, \"window_seconds\": $window, \"connections\": $connections, \"targets\": [${results[*]}]}") >"$json"
fi
