#!/usr/bin/env bash
# heapprof's performance table: builds the benchmark programs and runs them.
# Every number is a ratio against a baseline measured in the same run (these
# machines are noisy), or a time with the baseline printed beside it.
#   tools/bench/run.sh [--quick] [--json FILE]
# --quick: fewer pairs and smaller workloads (a few minutes); default: full.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${HEAPPROF_BUILD_DIR:-$root/build}"
quick=""
json="$build/bench-results.json"
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick="--quick" ;;
    --json) json="$2"; shift ;;
    *) echo "usage: tools/bench/run.sh [--quick] [--json FILE]" >&2; exit 2 ;;
  esac
  shift
done

"$root/tools/build.sh" --target heapprof collector_bench fidelity_bench symbolize_bench encode_bench >/dev/null
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

section() { printf '\n== %s ==\n' "$1"; }

section "collector: overhead, GC-prologue snapshot cost, ledger memory, isolate held at Stop, accuracy"
"$build/collector_bench" $quick --json "$tmp/collector.json"

section "attribution fidelity and the cost of exact mode"
"$build/fidelity_bench" "$build/heapprof" "$root/tools/bench/fidelity" $quick --json "$tmp/fidelity.json"

section "encode + gzip (Google Benchmark)"
if [ -n "$quick" ]; then min_time=0.2; else min_time=1; fi
"$build/encode_bench" --benchmark_min_time="$min_time" --benchmark_format=console \
  --benchmark_out="$tmp/encode.json" --benchmark_out_format=json

section "symbolize a 10k-location profile against a ~5 MB source map"
"$build/symbolize_bench" 10000 5 | tee "$tmp/symbolize.txt"

if [ -f "$root/heapprof/node/index.js" ] && command -v node >/dev/null; then
  section "Node.js: heapprof vs @datadog/pprof vs node --heap-prof"
  node "$root/tools/bench/node_peers.mjs" $quick | tee "$tmp/node.txt" || echo "(node peers benchmark failed)"
fi

# One JSON file beside the printed table.
node -e '
const fs = require("fs"); const d = process.argv[1];
const read = (f) => { try { return JSON.parse(fs.readFileSync(d + "/" + f, "utf8")); } catch { return null; } };
const text = (f) => { try { return fs.readFileSync(d + "/" + f, "utf8"); } catch { return null; } };
const out = { collector: read("collector.json"), fidelity: read("fidelity.json"), encode: read("encode.json"),
              symbolize: text("symbolize.txt"), node_peers: text("node.txt") };
fs.writeFileSync(process.argv[2], JSON.stringify(out, null, 2) + "\n");' "$tmp" "$json"
echo
echo "JSON: $json"
