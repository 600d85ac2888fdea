#!/usr/bin/env bash
# The answer a newcomer reads, on real framework bundles: each conformance app
# (tests/conformance/apps, bundled by esbuild as the conformance suite does)
# with a planted culprit (data/planted/planted.js: a function that keeps
# memory alive through V8 built-ins and heapprof's runtime), served its
# conformance requests by `heapprof run`. The final in-use answer line must
# name plantedCulprit (not padEnd, slice or heapprof:runtime); its text,
# numbers masked, must match golden/answers.txt; the --user-code table must
# head with it while the full table stays as V8 recorded it; and no file
# name printed is ambiguous within its profile.
# Set HEAPPROF_UPDATE_GOLDEN=1 to rewrite the golden file after a deliberate change.
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
source "$here/lib.sh"
js="$src/tests/js/node_modules"
[ -x "$js/.bin/esbuild" ] || { echo "answers_test.sh: no esbuild in tests/js (tools/bootstrap.sh installs it)" >&2; exit 1; }

mask() {
  sed -E -e 's/[0-9]+(\.[0-9]+)? (B|KiB|MiB|GiB)/<bytes>/g' -e 's/[0-9]+(\.[0-9]+)?%/<pct>/g' \
    -e 's/±[0-9]+(\.[0-9]+)?/±<pts>/g' -e 's/ \(shares are ±<pts> points: too few samples to be sure\)//' \
    -e 's/\.js:[0-9]+/.js:<line>/g' -e 's/ +/ /g'
}

: >answers.txt
for app in hono itty-router tsndr-router toucan jose; do
  mkdir -p "$app"
  sed "s#'APP'#'$src/tests/conformance/apps/$app/worker.js'#" "$here/data/planted/planted.js" >"$app/planted.js"
  NODE_PATH="$js" "$js/.bin/esbuild" "$app/planted.js" --bundle --format=esm --conditions=worker,browser \
    --sourcemap --log-level=warning --outfile="$app/worker.js" || { fail "$app: esbuild failed"; continue; }
  handler=()
  [ -f "$src/tests/conformance/apps/$app/fetch-handler.js" ] &&
    handler=(--fetch-handler "$src/tests/conformance/apps/$app/fetch-handler.js")
  expect_exit 0 "$app/run" -- "$heapprof" run "$app/worker.js" --requests-file "$src/tests/conformance/apps/$app/requests.jsonl" \
    --requests 4000 --warmup 100 --max-failures 100% "${handler[@]}" --top 5 -o "$app/profile.pb.gz"
  answer="$(grep -E '\(inuse_space\)' "$app/run.out" | tail -1)"
  case "$answer" in
    plantedCulprit\ \(planted.js:*) ;;
    *) fail "$app: the in-use answer does not name plantedCulprit: $answer" ;;
  esac
  case "$answer" in *padEnd*|*slice*|*heapprof:runtime*) fail "$app: the answer names a built-in or the runtime: $answer" ;; esac
  { echo "== $app"; echo "$answer" | mask; } >>answers.txt

  # The full table stays as V8 recorded it: a built-in or the runtime heads it;
  # the user-code view heads with the culprit.
  "$heapprof" top "$app/profile.pb.gz" -s inuse_space -n 3 >"$app/top.out"
  "$heapprof" top "$app/profile.pb.gz" -s inuse_space -n 3 --user-code >"$app/top-user.out"
  [ "$(top_function "$app/top.out" inuse_space)" != plantedCulprit ] ||
    fail "$app: plantedCulprit heads the full in-use table; the planted culprit no longer allocates through built-ins"
  [ "$(top_function "$app/top-user.out" inuse_space)" = plantedCulprit ] ||
    fail "$app: the --user-code table does not head with plantedCulprit: $(sed -n 3p "$app/top-user.out")"
  expect_in "$app/top-user.out" "(your code)"

  # Every printed file names one file of the profile.
  for type in inuse_space alloc_space; do
    "$heapprof" top "$app/profile.pb.gz" -s "$type" -n 100000 >"$app/all-$type.out"
    node "$here/file_labels_check.mjs" "$app/profile.pb.gz" "$app/all-$type.out" "$js" >"$app/labels-$type.out" 2>&1 ||
      fail "$app ($type): $(cat "$app/labels-$type.out")"
  done
done

if [ "${HEAPPROF_UPDATE_GOLDEN:-0}" = 1 ]; then
  cp answers.txt "$here/golden/answers.txt"
elif ! diff -u "$here/golden/answers.txt" answers.txt >answers.diff; then
  fail "golden/answers.txt differs:"
  cat answers.diff >&2
fi
finish
