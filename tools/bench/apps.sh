#!/usr/bin/env bash
# A profiling window's cost on real framework apps (tests/conformance/apps,
# bundled by esbuild as the conformance suite bundles them):
#   - apps_bench: the app's requests in the embedded runtime, unprofiled vs
#     V8's sampler alone (the floor) vs heapprof's window, at 512 and 64 KiB,
#     in rounds until the intervals decide; the windows' GCs and the ledger's
#     time per GC;
#   - apps_serve.mjs: heapprof serve under wrk, a window open vs none, short
#     alternating pairs until the slowdown's interval decides.
#   apps.sh <build dir> [--quick] [--apps "hono itty-router sentry otel"] [--json FILE]
set -euo pipefail
build="$1"
shift
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
src="$(cd "$here/../.." && pwd)"
quick="" json="" apps="hono itty-router sentry otel"
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1 ;;
    --json) json="$2"; shift ;;
    --apps) apps="$2"; shift ;;
    *) echo "usage: apps.sh <build dir> [--quick] [--apps \"APP ...\"] [--json FILE]" >&2; exit 2 ;;
  esac
  shift
done
js="$src/tests/js/node_modules"
[ -x "$js/.bin/esbuild" ] || { echo "apps.sh: no esbuild in tests/js (tools/bootstrap.sh installs it)" >&2; exit 1; }
[ -x "$build/apps_bench" ] || { echo "apps.sh: no $build/apps_bench (tools/build.sh --target apps_bench)" >&2; exit 1; }
# Budgets per row: the most seconds a row may take before it says "undecided".
if [ -n "$quick" ]; then bench_s=10 serve_s=12 phase=1; else bench_s=40 serve_s=45 phase=1.5; fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

results=()
for app in $apps; do
  dir="$src/tests/conformance/apps/$app"
  [ -f "$dir/worker.js" ] || { echo "apps.sh: no app $app in tests/conformance/apps" >&2; exit 2; }
  flags=()
  [ -f "$dir/wrangler.toml" ] &&
    read -r -a flags <<<"$(sed -n 's/^compatibility_flags *= *\[\(.*\)\]/\1/p' "$dir/wrangler.toml" | tr -d '",')"
  externals=(--external:'cloudflare:*' --external:'node:*')
  case " ${flags[*]:-} " in
    *" nodejs_compat "*|*" nodejs_compat_v2 "*)
      for name in async_hooks buffer crypto events path process string_decoder url util; do externals+=("--external:$name"); done ;;
  esac
  mkdir -p "$tmp/$app"
  NODE_PATH="$js" "$js/.bin/esbuild" "$dir/worker.js" --bundle --format=esm --conditions=worker,browser \
    --log-level=warning "${externals[@]}" --outfile="$tmp/$app/worker.js"
  # Requests per timed run: about 0.2-0.5 s of work on an idle core (sentry's
  # requests capture and send events: 10 times hono's cost each).
  case "$app" in sentry) per_run=300 warmup=50 ;; otel) per_run=600 warmup=100 ;; *) per_run=1500 warmup=200 ;; esac
  bench_args=(--name "$app" --requests "$per_run" --warmup "$warmup" --max-seconds "$bench_s" --json "$tmp/$app/bench.json")
  for f in "${flags[@]}"; do bench_args+=(--flag "$f"); done
  serve_args=(--name "$app" --seconds "$phase" --max-seconds "$serve_s" --json "$tmp/$app/serve.json")
  if [ -f "$dir/fetch-handler.js" ]; then
    bench_args+=(--fetch-handler "$dir/fetch-handler.js")
    serve_args+=(--fetch-handler "$dir/fetch-handler.js")
  fi
  [ -f "$dir/wrangler.toml" ] && serve_args+=(--config "$dir/wrangler.toml")
  "$build/apps_bench" "$tmp/$app/worker.js" "$dir/requests.jsonl" "${bench_args[@]}"
  node "$here/apps_serve.mjs" --heapprof "$build/heapprof" --bundle "$tmp/$app/worker.js" --requests "$dir/requests.jsonl" \
    "${serve_args[@]}" || echo "{}" >"$tmp/$app/serve.json"
  results+=("{\"app\": \"$app\", \"bench\": $(cat "$tmp/$app/bench.json"), \"serve\": $(cat "$tmp/$app/serve.json")}")
done
if [ -n "$json" ]; then echo "[$(IFS=,; echo "${results[*]}")]" >"$json"; fi
