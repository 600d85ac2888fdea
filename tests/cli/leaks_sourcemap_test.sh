#!/usr/bin/env bash
# The leak report names sites by their original file:line, as the profile
# tables do: a TypeScript worker bundled and minified by esbuild
# (tests/data/sourcemap, built by the "sourcemap: generate" fixture) whose
# metrics registry keeps every observation. Under run --leaks and serve
# --leaks the growing site is recordRequest in metrics.ts at the line the
# source declares it, not a renamed function of worker.min.js; with
# --no-source-maps it stays in the bundle.
#   leaks_sourcemap_test.sh <heapprof> <source dir> <work dir> <generated dir>
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
generated="$(cd "$4" && pwd)"
# shellcheck source=lib.sh
source "$here/lib.sh"
# shellcheck source=serve_lib.sh
source "$here/serve_lib.sh"
command -v curl >/dev/null || { echo "curl is not installed" >&2; exit 1; }

bundle="$generated/esbuild/worker.min.js"
[ -f "$bundle" ] || { echo "missing $bundle (run the sourcemap fixture)" >&2; exit 1; }
record_line="$(grep -nF -- 'recordRequest(route: string' "$src/tests/data/sourcemap/src/metrics.ts" | head -1 | cut -d: -f1)"

# growing <json>: "function script line" of the first growing site's leaf.
growing() {
  node -e '
    const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    const s = r.sites.find((s) => s.verdict === "growing" && s.frames.length);
    console.log(s ? `${s.frames[0].function} ${s.frames[0].script.split("/").pop()} ${s.frames[0].line}` : "none");' "$1"
}

expect_exit 0 run -- "$heapprof" run "$bundle" --leaks -n 3000 --interval 16k --cadence 20ms --leaks-json run.json
got="$(growing run.json)"
echo "run --leaks: growing $got"
[ "$got" = "recordRequest metrics.ts $record_line" ] || fail "run --leaks names the growing site '$got'"
expect_in run.out "recordRequest (metrics.ts:$record_line)"
if grep -q "worker.min.js:" run.out; then fail "run --leaks' report still names frames in worker.min.js"; fi

expect_exit 0 raw -- "$heapprof" run "$bundle" --leaks -n 3000 --interval 16k --cadence 20ms --leaks-json raw.json \
  --no-source-maps
got="$(growing raw.json)"
case "$got" in *" worker.min.js 1") ;; *) fail "with --no-source-maps the growing site is '$got', not in worker.min.js" ;; esac

start_serve serve "$bundle" --leaks --cadence 20ms --interval 16k
trap 'kill -9 $serve_pid 2>/dev/null || true' EXIT
curl -s -o /dev/null "$base/api/users/[1-3000]"
curl -s -o serve.json "$debug/debug/heapprof/leaks"
got="$(growing serve.json)"
echo "serve --leaks: growing $got"
[ "$got" = "recordRequest metrics.ts $record_line" ] || fail "serve --leaks names the growing site '$got'"
curl -s -o serve.html "$debug/debug/heapprof/leaks.html"
expect_in serve.html "recordRequest (metrics.ts:$record_line)"
stop_serve
expect_in serve.out "recordRequest (metrics.ts:$record_line)"
finish
