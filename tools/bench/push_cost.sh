#!/usr/bin/env bash
# What pushing costs the worker (issue #37): four heapprof serve processes of
# the same worker, each with --continuous 1s windows, whose windows go
#   - nowhere but files (no push: the baseline),
#   - to a store that accepts them (tests/cli/push_store.mjs),
#   - to a store that answers 503 to every push (retried with backoff, then
#     dropped past the queue bound),
#   - to a store that is gone (connection refused);
# wrk against each in turn, the phases alternating round by round so drift
# hits all alike; requests/s of each as a ratio against no push, the median
# of the rounds. Every server also writes its windows to files (--output-dir),
# so the push is the only difference. The pusher has its own thread: the
# ratios should stay ~1.
#   push_cost.sh <heapprof> <worker.js> [--quick] [--json FILE]
set -euo pipefail
heapprof="$1" worker="$2"
shift 2
quick="" json=""
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1 ;;
    --json) json="$2"; shift ;;
    *) echo "usage: push_cost.sh <heapprof> <worker.js> [--quick] [--json FILE]" >&2; exit 2 ;;
  esac
  shift
done
if [ -n "$quick" ]; then seconds=3 rounds=2; else seconds=8 rounds=5; fi
connections=16
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$here/../.."
# shellcheck source=tools/bench/load_lib.sh
source "$here/load_lib.sh"
export HEAPPROF_JS_DIR="$root/tests/js"
# The servers write window files until they end: end them before the folder goes.
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; rm -rf "$tmp"' EXIT

# store <name> <script>: a stand-in store on a free port; sets port_<name>.
store() {
  node "$root/tests/cli/push_store.mjs" "$tmp/$1.port" "$tmp/$1" "$2" >/dev/null 2>"$tmp/$1.store.err" &
  pids+=($!)
  for _ in $(seq 1 100); do [ -s "$tmp/$1.port" ] && break; sleep 0.05; done
  printf -v "port_$1" '%s' "$(cat "$tmp/$1.port")"
}
store ok ""
store failing "503*"
ok_port="$port_ok" failing_port="$port_failing"
gone_port="$(free_port)"  # nothing listens there

# serve_one <name> [push flags...]: sets url_<name>.
serve_one() {
  local name="$1"
  shift
  local port debug_port
  port="$(free_port)" debug_port="$(free_port)"
  mkdir -p "$tmp/$name.windows"
  "$heapprof" serve "$worker" --listen "127.0.0.1:$port" --debug-listen "127.0.0.1:$debug_port" --continuous 1s \
    --output-dir "$tmp/$name.windows" --shutdown-timeout 1s "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" </dev/null &
  pids+=($!)
  printf -v "url_$name" '%s' "http://127.0.0.1:$port/api/users/42"
  wait_http "http://127.0.0.1:$port/api/users/42"
}
serve_one none
serve_one accepted --push "http://127.0.0.1:$ok_port"
serve_one failing --push "http://127.0.0.1:$failing_port"
serve_one gone --push "http://127.0.0.1:$gone_port"

load() {
  wrk -t2 -c"$connections" -d"${seconds}s" "$1" >"$tmp/wrk.txt"
  if grep -q "Non-2xx\|Socket errors" "$tmp/wrk.txt"; then
    echo "$1 did not answer every request with 2xx:" >&2
    cat "$tmp/wrk.txt" >&2
    exit 1
  fi
  awk '/Requests\/sec:/ { printf "%.0f\n", $2 }' "$tmp/wrk.txt"
}
phases=(none accepted failing gone)
for p in "${phases[@]}"; do
  u="url_$p"
  wrk -t2 -c"$connections" -d1s "${!u}" >/dev/null
  : >"$tmp/$p.rps"
done
for round in $(seq 1 "$rounds"); do
  # Each round starts at another phase, so none is always first.
  for i in 0 1 2 3; do
    p="${phases[$(((i + round) % 4))]}"
    u="url_$p"
    load "${!u}" >>"$tmp/$p.rps"
  done
done
median() { sort -n | awk '{ v[NR] = $1 } END { print NR ? v[int((NR + 1) / 2)] : 0 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", (b > 0 ? a / b : 0) }'; }
range() { awk -v b="$2" 'BEGIN { lo = 1e18; hi = 0 } { r = $1 / b; if (r < lo) lo = r; if (r > hi) hi = r }
                          END { printf "%.2f-%.2f", lo, hi }' "$1"; }
none="$(median <"$tmp/none.rps")"
acc="$(median <"$tmp/accepted.rps")"
failing="$(median <"$tmp/failing.rps")"
gone="$(median <"$tmp/gone.rps")"
# What the pushers did, from the debug index of each (the push's counters).
counter() {  # counter <name> <row>
  local d
  d="$(sed -n 's#.*profiles on http://\([0-9.:]*\)/debug/pprof/.*#\1#p' "$tmp/$1.out" | head -1)"
  curl -s "http://$d/debug/pprof/" | sed -n "s#.*<tr><th>$2</th><td>\([^<]*\)</td></tr>.*#\1#p" | head -1
}
acc_sent="$(counter accepted "windows sent")"
failing_retried="$(counter failing "retried requests")"
failing_dropped="$(counter failing "windows dropped (queue full)")"
gone_retried="$(counter gone "retried requests")"
printf 'wrk -t2 -c%d, %d s x %d rounds, %s, --continuous 1s on each\n' "$connections" "$seconds" "$rounds" "$(basename "$worker")"
printf '  no push (files only):      %8d req/s\n' "$none"
printf '  push, store accepts:       %8d req/s  x%s [%s]  (%s windows sent)\n' "$acc" "$(ratio "$acc" "$none")" \
  "$(range "$tmp/accepted.rps" "$none")" "${acc_sent:-?}"
printf '  push, store answers 503:   %8d req/s  x%s [%s]  (%s retried requests, %s dropped)\n' "$failing" \
  "$(ratio "$failing" "$none")" "$(range "$tmp/failing.rps" "$none")" "${failing_retried:-?}" "${failing_dropped:-?}"
printf '  push, store gone:          %8d req/s  x%s [%s]  (%s retried requests)\n' "$gone" "$(ratio "$gone" "$none")" \
  "$(range "$tmp/gone.rps" "$none")" "${gone_retried:-?}"
printf '  failing / accepting store: x%s; gone / accepting: x%s\n' "$(ratio "$failing" "$acc")" "$(ratio "$gone" "$acc")"
if [ -n "$json" ]; then
  printf '{"worker": "%s", "seconds": %d, "rounds": %d, "connections": %d, "none_rps": %s, "accepted_rps": %s, "failing_rps": %s, "gone_rps": %s, "accepted_ratio": %s, "failing_ratio": %s, "gone_ratio": %s, "failing_vs_accepted": %s, "gone_vs_accepted": %s, "accepted_sent": %s, "failing_retried": %s, "failing_dropped": %s, "gone_retried": %s}\n' \
    "$(basename "$worker")" "$seconds" "$rounds" "$connections" "$none" "$acc" "$failing" "$gone" \
    "$(ratio "$acc" "$none")" "$(ratio "$failing" "$none")" "$(ratio "$gone" "$none")" \
    "$(ratio "$failing" "$acc")" "$(ratio "$gone" "$acc")" "${acc_sent:-null}" "${failing_retried:-null}" \
    "${failing_dropped:-null}" "${gone_retried:-null}" >"$json"
fi
