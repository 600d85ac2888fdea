#!/usr/bin/env bash
# The differential conformance suite: real framework apps from npm
# (apps/<app>/worker.js, bundled by esbuild) answer the same requests
# (apps/<app>/requests.jsonl) under `heapprof run` and under workerd, and every
# response's status, headers and body must be identical, apart from the few
# differences compare.mjs allows (and says why). Prints a table app by app.
#   tests/conformance/run.sh [HEAPPROF [WORK_DIR]]   (default: build/heapprof, a temporary folder)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
src="$(cd "$here/../.." && pwd)"
heapprof="${1:-$src/build/heapprof}"
work="${2:-}"
workerd="${HEAPPROF_WORKERD:-$src/.deps/workerd/bin/workerd}"
js="$src/tests/js/node_modules"
[ -x "$heapprof" ] || { echo "run.sh: no heapprof at $heapprof (tools/build.sh builds it)" >&2; exit 2; }
[ -x "$workerd" ] || { echo "run.sh: no workerd at $workerd (tools/bootstrap.sh installs it)" >&2; exit 2; }
[ -x "$js/.bin/esbuild" ] || { echo "run.sh: no esbuild in tests/js (tools/bootstrap.sh installs it)" >&2; exit 2; }
if [ -z "$work" ]; then
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
fi
mkdir -p "$work"

apps=()
for dir in "$here"/apps/*/; do apps+=("$(basename "$dir")"); done
# Only what this script writes is replaced in a WORK_DIR the user gives.
for app in "${apps[@]}" workerd; do rm -rf "${work:?}/$app"; done
driver_args=()
compare_args=()
for app in "${apps[@]}"; do
  requests="$here/apps/$app/requests.jsonl"
  bundle="$work/$app/worker.js"
  # An app's wrangler.toml (compatibility flags, Durable Object bindings and
  # migrations) configures both runtimes: heapprof reads it (--config),
  # workerd_responses.mjs finds it beside the requests file.
  config="$here/apps/$app/wrangler.toml"
  flags=()
  if [ -f "$config" ]; then
    read -r -a flags <<<"$(sed -n 's/^compatibility_flags *= *\[\(.*\)\]/\1/p' "$config" | tr -d '",')"
  fi
  # The modules the runtime provides stay imports, as wrangler leaves them
  # (with nodejs_compat, the bare names of node's modules too).
  externals=(--external:'cloudflare:*' --external:'node:*')
  case " ${flags[*]:-} " in
    *" nodejs_compat "*|*" nodejs_compat_v2 "*)
      for name in async_hooks buffer crypto events path process string_decoder url util; do externals+=("--external:$name"); done ;;
  esac
  NODE_PATH="$js" "$js/.bin/esbuild" "$here/apps/$app/worker.js" --bundle --format=esm --conditions=worker,browser \
    --sourcemap --log-level=warning "${externals[@]}" --outfile="$bundle"
  # Exactly one pass over the requests file, every request recorded; 5xx
  # answers are part of what is compared, so they do not fail the run.
  n="$(grep -c . "$requests")"
  # An app's fetch-handler.js answers its subrequests in both runtimes.
  handler="$here/apps/$app/fetch-handler.js"
  handler_args=()
  [ -f "$handler" ] && handler_args=(--fetch-handler "$handler")
  # An app's wrangler.toml (Durable Object bindings and migrations) configures
  # both runtimes: heapprof reads it, workerd_responses.mjs finds it beside
  # the requests file.
  config_args=()
  [ -f "$here/apps/$app/wrangler.toml" ] && config_args=(--config "$here/apps/$app/wrangler.toml")
  if ! "$heapprof" run "$bundle" --requests-file "$requests" --requests "$n" --warmup 0 --max-failures 100% \
       "${handler_args[@]}" "${config_args[@]}" --top 0 -o "$work/$app/profile.pb.gz" --responses-out "$work/$app/heapprof.jsonl" \
       >"$work/$app/heapprof.out" 2>&1; then
    echo "run.sh: heapprof run failed for $app:" >&2
    cat "$work/$app/heapprof.out" >&2
    exit 1
  fi
  driver_args+=("$app=$bundle,$requests,$work/$app/workerd.jsonl${handler_args[1]:+,$handler}")
  compare_args+=("$app=$work/$app/heapprof.jsonl,$work/$app/workerd.jsonl")
done
node "$here/workerd_responses.mjs" --workerd "$workerd" --dir "$work/workerd" "${driver_args[@]}"
node "$here/compare.mjs" "${compare_args[@]}"
