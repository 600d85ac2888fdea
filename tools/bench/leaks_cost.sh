#!/usr/bin/env bash
# What a leak session (`heapprof run --leaks`, the always-on sampler and a
# live snapshot after a full GC at the default cadence, into the tracker)
# costs the worker: two replicas of one worker (tools/bench/leaks-cost-worker.js,
# ~22 MiB live) serve side by side in one process for the same time, one in
# a leak session, the other not profiled at all (no sampler): the ratio of
# their requests served is the session's cost, measured against a baseline
# under the same load. Which replica is profiled alternates between pairs.
# The snapshots' own pause, from the report, is given per hour.
#   leaks_cost.sh <heapprof> [--quick] [--json FILE]
set -euo pipefail
heapprof="$1"
shift
quick="" json=""
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1 ;;
    --json) json="$2"; shift ;;
    *) echo "usage: leaks_cost.sh <heapprof> [--quick] [--json FILE]" >&2; exit 2 ;;
  esac
  shift
done
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
worker="$here/leaks-cost-worker.js"
if [ -n "$quick" ]; then seconds=10 pairs=2; else seconds=60 pairs=6; fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

results=()
for p in $(seq 1 "$pairs"); do
  profiled=$(((p - 1) % 2)) other=$((p % 2))
  out="$tmp/pair-$p.out"
  "$heapprof" run "$worker" --leaks --replicas 2 --profile "leaks-cost-worker-$profiled" --duration "${seconds}s" \
    --top 0 --no-source-maps -o "$tmp/p$p.pb.gz" >"$out" 2>"$tmp/pair-$p.err" ||
    { echo "heapprof run --leaks failed:" >&2; cat "$tmp/pair-$p.err" >&2; exit 1; }
  with="$(sed -n "s/^leaks-cost-worker-$profiled: served \([0-9]*\) requests.*/\1/p" "$out")"
  without="$(sed -n "s/^leaks-cost-worker-$other: served \([0-9]*\) requests (not profiled).*/\1/p" "$out")"
  # "cost     the snapshots paused the worker 207.0 ms in all (21.30 % of the session), the slowest 31.9 ms"
  read -r paused share slowest < <(sed -n 's/.*paused the worker \([0-9.]*\) ms in all (\([0-9.]*\) % of the session), the slowest \([0-9.]*\) ms.*/\1 \2 \3/p' "$out")
  snapshots="$(sed -n 's/^  session  \([0-9]*\) live snapshots.*/\1/p' "$out")"
  cadence="$(sed -n 's/^heapprof run: leak session on .*: a live snapshot every \([0-9.]*\) s.*/\1/p' "$tmp/pair-$p.err")"
  [ -n "$with" ] && [ -n "$without" ] && [ -n "$paused" ] ||
    { echo "could not read pair $p's report:" >&2; cat "$out" >&2; exit 1; }
  echo "pair $p: replica $profiled in a leak session served $with, replica $other unprofiled $without; $snapshots snapshots every $cadence s paused it $paused ms ($share %), the slowest $slowest ms"
  results+=("{\"with\": $with, \"without\": $without, \"paused_ms\": $paused, \"share_percent\": $share, \"slowest_ms\": $slowest, \"snapshots\": $snapshots, \"cadence_s\": $cadence}")
done
summary="$(node -e '
  const pairs = JSON.parse(process.argv[1]);
  const ratios = pairs.map((p) => p.with / p.without).sort((a, b) => a - b);
  const median = (xs) => xs.length % 2 ? xs[(xs.length - 1) / 2] : (xs[xs.length / 2 - 1] + xs[xs.length / 2]) / 2;
  const shares = pairs.map((p) => p.share_percent).sort((a, b) => a - b);
  const out = { seconds: Number(process.argv[2]), pairs, requests_ratio: median(ratios), ratio_min: ratios[0],
                ratio_max: ratios[ratios.length - 1], pause_share_percent: median(shares),
                pause_seconds_per_hour: median(shares) / 100 * 3600,
                slowest_ms: Math.max(...pairs.map((p) => p.slowest_ms)), cadence_s: median(pairs.map((p) => p.cadence_s)) };
  console.log(JSON.stringify(out));' "[$(IFS=,; echo "${results[*]}")]" "$seconds")"
node -e '
  const s = JSON.parse(process.argv[1]);
  console.log(`leak session at the default cadence (${s.cadence_s} s): requests served ${s.requests_ratio.toFixed(3)} of an unprofiled replica beside it [${s.ratio_min.toFixed(3)}-${s.ratio_max.toFixed(3)}]; snapshots pause the worker ${s.pause_share_percent.toFixed(2)} % = ${s.pause_seconds_per_hour.toFixed(1)} s per hour (slowest ${s.slowest_ms} ms)`);' "$summary"
if [ -n "$json" ]; then echo "$summary" >"$json"; fi
