#!/usr/bin/env bash
# Six real npm Workers apps, each given as a user gives it: a folder with the
# esbuild bundle, its wrangler.toml and a requests.jsonl (and, for the two
# SDKs that send telemetry, the fetch handler that stands in for the
# network). tRPC (@trpc/server's fetch adapter), GraphQL Yoga, @hono/zod-openapi,
# @sentry/cloudflare and @microlabs/otel-cf-workers (both nodejs_compat), and
# a Durable Object worker whose classes come from its migrations. Each plants
# a culprit (a route that keeps what it makes). Under `heapprof run --runtime
# workerd DIR` and under the embedded `heapprof run DIR`, every request
# succeeds and the culprit is the top of inuse_space with at least the share
# below, in heapprof's table and in go tool pprof's. The apps' answers are
# compared with workerd's request by request in tests/conformance.
#   workerd_apps_test.sh <heapprof> <source dir> <work dir> [runs]   (runs: repeat each profile, to measure the shares)
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
source "$here/lib.sh"
# shellcheck source=../pprof_readers/go_env.sh
source "$src/tests/pprof_readers/go_env.sh"
go_env "$work"
runs="${4:-1}"
export HEAPPROF_WORKERD="$src/.deps/workerd/bin/workerd"
[ -x "$HEAPPROF_WORKERD" ] || { echo "workerd is not installed (tools/bootstrap.sh)"; exit 1; }
export TMPDIR="$work/tmp"
mkdir -p "$TMPDIR"
js="$src/tests/js/node_modules"
apps="$src/tests/conformance/apps"
traffic="$src/tests/cli/data/workerd_apps"

# The culprit's least share of inuse_space, in either runtime. Measured over
# 6 runs of each app in each runtime (docs/remote.md): the lowest mean was
# sentry's in the embedded runtime, 84.2 % (82.3-85.8, standard deviation
# 1.1 points); every other app and runtime 96.4-100 %. 75 % is 8 of the
# largest standard deviations below the lowest mean.
min_share=75

# The app's folder, as a user gives it: the bundle as wrangler builds it
# (the runtime's modules stay imports; with nodejs_compat, node's bare names too).
folder() {
  local app="$1"
  mkdir -p "$app"
  cp "$apps/$app/wrangler.toml" "$app/"
  cp "$traffic/$app.jsonl" "$app/requests.jsonl"
  [ -f "$apps/$app/fetch-handler.js" ] && cp "$apps/$app/fetch-handler.js" "$app/"
  local externals=(--external:'cloudflare:*' --external:'node:*')
  if grep -q '^compatibility_flags *=.*nodejs_compat' "$app/wrangler.toml"; then
    for name in async_hooks buffer crypto events path process string_decoder url util; do externals+=("--external:$name"); done
  fi
  NODE_PATH="$js" "$js/.bin/esbuild" "$apps/$app/worker.js" --bundle --format=esm --conditions=worker,browser \
    --sourcemap --log-level=warning "${externals[@]}" --outfile="$app/worker.js" || fail "$app: esbuild failed"
}

# profile <app> <culprit> <runtime> <run>
profile() {
  local app="$1" fn="$2" runtime="$3" run="$4"
  local name="$app-$runtime-$run" args=()
  [ "$runtime" = workerd ] && args+=(--runtime workerd)
  [ -f "$app/fetch-handler.js" ] && args+=(--fetch-handler "$app/fetch-handler.js")
  # The embedded runtime runs each Durable Object in an isolate of its own:
  # the culprit is in the carts' isolates, so profile one of them (workerd
  # runs a namespace's objects in the worker's isolate).
  [ "$app" = durable-objects-migrations ] && [ "$runtime" = embedded ] && args+=(--profile CARTS:ann)
  expect_exit 0 "$name" -- "$heapprof" run "$app" "${args[@]}" --requests-file "$app/requests.jsonl" \
    --requests 1200 --warmup 80 --interval 64KiB -o "$name.pb.gz"
  expect_in "$name.out" "no request failed"
  local got share
  got="$(top_function "$name.out" inuse_space)"
  share="$(top_share "$name.out" inuse_space)"
  echo "share: $app $runtime $fn ${share:-none} (top: ${got:-none})"
  [ "$got" = "$fn" ] || fail "$name: heapprof's inuse_space table starts with '$got', not '$fn'"
  awk -v s="${share:-0}" -v m="$min_share" 'BEGIN { exit !(s >= m) }' ||
    fail "$name: $fn holds ${share:-no} % of inuse_space, not >= $min_share %"
  got="$(go tool pprof -top -unit=B -sample_index=inuse_space "$name.pb.gz" 2>/dev/null |
    awk '/flat%/ {getline; for (i = 6; i <= NF; i++) printf "%s%s", $i, (i < NF ? " " : "\n"); exit}')"
  [ "$got" = "$fn" ] || fail "$name: go tool pprof's inuse_space top is '$got', not '$fn'"
}

for entry in trpc:keepTrailEntry graphql-yoga:keepReview zod-openapi:keepEvent sentry:retainSession \
             otel:keepAuditRecord durable-objects-migrations:rememberLine; do
  app="${entry%%:*}"
  folder "$app"
  for ((run = 1; run <= runs; run++)); do
    for runtime in workerd embedded; do profile "$app" "${entry#*:}" "$runtime" "$run"; done
  done
done
# The Durable Object app's two bindings reached both runtimes.
for runtime in workerd embedded; do
  expect_in "durable-objects-migrations-$runtime-1.out" "Durable Objects CARTS -> Cart, LEDGER -> Ledger"
done
pgrep -f "$TMPDIR/heapprof-workerd-" >/dev/null && fail "workerd processes left behind"
finish
