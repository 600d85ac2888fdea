#!/usr/bin/env bash
# No false source-map warning on a fresh bundle: a TypeScript worker
# (data/helpers/worker.ts) built by esbuild (--target=es2017) and by tsc
# (--target ES5), both with source maps, whose output calls the compilers'
# generated helpers (__spreadValues, __awaiter, __generator...), which no map
# describes. `heapprof run` must print no source-map warning, count those
# frames quietly in the profile's source_maps comment and map the rest to
# worker.ts. A map older than its bundle still warns.
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
source "$here/lib.sh"
js="$src/tests/js/node_modules"
[ -x "$js/.bin/esbuild" ] && [ -x "$js/.bin/tsc" ] || { echo "no esbuild or tsc in tests/js (tools/bootstrap.sh)" >&2; exit 1; }

cp "$here/data/helpers/worker.ts" .
"$js/.bin/esbuild" worker.ts --bundle --format=esm --target=es2017 --sourcemap --log-level=warning \
  --outfile=esbuild/worker.js || fail "esbuild failed"
"$js/.bin/tsc" --target ES5 --module ES2015 --lib es2017,dom --sourceMap --skipLibCheck --outDir tsc worker.ts ||
  fail "tsc failed"
grep -q '__spreadValues' esbuild/worker.js || fail "esbuild's output has no __spreadValues helper"
grep -q '__awaiter' tsc/worker.js || fail "tsc's output has no __awaiter helper"

comment_of() { gzip -dc "$1" | tr -c '[:print:]' '\n' | grep -a '^source_maps: ' | head -1; }

for build in esbuild tsc; do
  expect_exit 0 "$build" -- "$heapprof" run "$build/worker.js" -n 3000 --interval 4KiB --top 40 -o "$build.pb.gz"
  if grep -qi "warning" "$build.err"; then fail "$build: a warning on a fresh bundle: $(grep -i warning "$build.err")"; fi
  comment="$(comment_of "$build.pb.gz")"
  echo "$build: $comment" >>comments.txt
  case "$comment" in
    *"in generated code no map describes ("*) ;;
    *) fail "$build: the profile's comment does not count the generated helpers: $comment" ;;
  esac
  case "$comment" in *"outside their map"*) fail "$build: frames counted outside their map: $comment" ;; esac
  expect_in "$build.out" "worker.ts:"
done
expect_in comments.txt "esbuild: source_maps: "
grep -E '^esbuild: .*__(spreadValues|defNormalProp)' comments.txt >/dev/null ||
  fail "esbuild: the helpers are not named: $(grep '^esbuild' comments.txt)"
grep -E '^tsc: .*__(awaiter|generator)' comments.txt >/dev/null || fail "tsc: the helpers are not named: $(grep '^tsc' comments.txt)"

# The same bundle with its map an hour older than the script: now it warns.
touch -d '-1 hour' esbuild/worker.js.map
expect_exit 0 stale -- "$heapprof" run esbuild/worker.js -n 3000 --interval 4KiB --top 0 -o stale.pb.gz
expect_in stale.err "older than the script"
finish
