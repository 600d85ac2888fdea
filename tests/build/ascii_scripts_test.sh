#!/usr/bin/env bash
# The worker runtime's embedded scripts (the prelude and the esbuild bundles)
# are ASCII: V8 stores a source with one character above U+00FF at two bytes a
# character, so one stray character in a comment doubles the memory of the
# whole script in every worker's heap (~100 KB for the prelude). Non-ASCII
# text belongs in \u escapes.
#   ascii_scripts_test.sh <source dir> <build dir>
set -uo pipefail
src="$1"
build="$2"
status=0
scripts=("$src/heapprof/runtime/worker_prelude.js")
while IFS= read -r f; do scripts+=("$f"); done < <(find "$src/heapprof/runtime/js/prelude" -name '*.js' | sort)
generated=0
for f in "$build"/generated/heapprof/*.js; do [ -e "$f" ] && scripts+=("$f") && generated=$((generated + 1)); done
[ "$generated" -ge 1 ] || { echo "no generated runtime bundles in $build/generated/heapprof (build first)"; exit 1; }
for f in "${scripts[@]}"; do
  if LC_ALL=C grep -nP '[^\x00-\x7F]' "$f" | head -5 | sed "s|^|$f:|" | grep .; then
    echo "FAIL: $f has non-ASCII characters (write them as \\u escapes)"
    status=1
  else
    echo "ok: $f"
  fi
done
exit "$status"
