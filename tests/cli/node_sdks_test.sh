#!/usr/bin/env bash
# Two real SDKs from npm that need nodejs_compat, each given as a bundle and
# its wrangler.toml (compatibility_flags = ["nodejs_compat"]), as a user
# would run them: @sentry/cloudflare (its scopes on AsyncLocalStorage) and
# @microlabs/otel-cf-workers (AsyncLocalStorage and EventEmitter; the app
# encodes trace ids with Buffer). Under `heapprof run` every request
# succeeds, and the culprit each app plants (a route that keeps what it
# makes) is the top of inuse_space with >= 60 % of it, in heapprof's table
# and in go tool pprof. The apps' answers are compared with workerd's by the
# conformance suite (tests/conformance/apps/sentry, otel).
#   node_sdks_test.sh <heapprof> <source dir> <work dir>
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
source "$here/lib.sh"
# shellcheck source=../pprof_readers/go_env.sh
source "$src/tests/pprof_readers/go_env.sh"
go_env "$work"
js="$src/tests/js/node_modules"
apps="$src/tests/conformance/apps"

# sdk <app> <culprit function> <culprit route>
sdk() {
  local app="$1" fn="$2" route="$3"
  mkdir -p "$app"
  NODE_PATH="$js" "$js/.bin/esbuild" "$apps/$app/worker.js" --bundle --format=esm --conditions=worker,browser \
    --sourcemap --log-level=warning --external:'node:*' --external:'cloudflare:*' --outfile="$app/worker.js"
  cp "$apps/$app/wrangler.toml" "$app/wrangler.toml"
  # Mostly the culprit's route, with the SDK's own work around it.
  : >"$app/requests.jsonl"
  for path in "$route" "$route" "$route" / "$route" "$route" "$route" "$4"; do
    printf '{"url": "https://shop.example.com%s"}\n' "$path" >>"$app/requests.jsonl"
  done
  expect_exit 0 "$app-run" -- "$heapprof" run "$app/worker.js" --config "$app/wrangler.toml" \
    --fetch-handler "$apps/$app/fetch-handler.js" --requests-file "$app/requests.jsonl" --requests 1200 --warmup 80 \
    --interval 64KiB -o "$app/profile.pb.gz"
  expect_in "$app-run.out" "no request failed"
  local got share
  got="$(top_function "$app-run.out" inuse_space)"
  [ "$got" = "$fn" ] || fail "$app: heapprof run's inuse_space table starts with '$got', not '$fn'"
  share="$(top_share "$app-run.out" inuse_space)"
  awk -v s="$share" 'BEGIN { exit !(s >= 60) }' || fail "$app: $fn holds $share % of inuse_space, not >= 60 %"
  got="$(go tool pprof -top -unit=B -sample_index=inuse_space "$app/profile.pb.gz" 2>/dev/null |
    awk '/flat%/ {getline; for (i = 6; i <= NF; i++) printf "%s%s", $i, (i < NF ? " " : "\n"); exit}')"
  [ "$got" = "$fn" ] || fail "$app: go tool pprof's inuse_space top is '$got', not '$fn'"
}

sdk sentry retainSession /session /capture
sdk otel keepAuditRecord /audit /order?id=1
finish
