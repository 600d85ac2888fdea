#!/usr/bin/env bash
# A .heapprofile written by `node --heap-prof` imports into heapprof, converts
# to pprof, and `go tool pprof` reads the result with the imported totals and
# the workload's function names; the heapprof CLI reads the file as it is.
#   heap_prof_test.sh <make_profile> <work dir> <heapprof>
set -euo pipefail
fixture="$1"
work="$2"
heapprof="$3"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=go_env.sh
source "$here/go_env.sh"
rm -rf "$work" && mkdir -p "$work/heapprof"
command -v node >/dev/null 2>&1 || { echo "node is not installed" >&2; exit 1; }

# A small interval so the short workload yields plenty of samples.
node --heap-prof --heap-prof-dir="$work/heapprof" --heap-prof-interval=16384 "$here/heap_prof_workload.js"
input="$(ls "$work"/heapprof/*.heapprofile | head -n1)"
[ -s "$input" ] || { echo "node --heap-prof wrote no profile" >&2; exit 1; }

"$fixture" convert "$input" "$work/converted.pb.gz" >"$work/imported.txt"
grep -q '^function retainSessionRecords$' "$work/imported.txt" ||
  { echo "FAIL: retainSessionRecords not imported" >&2; cat "$work/imported.txt" >&2; exit 1; }

# A real profile round-trips: pprof written by us reads back with the same totals.
"$fixture" show "$work/converted.pb.gz" >"$work/reread.txt"
if ! diff "$work/imported.txt" "$work/reread.txt" >&2; then
  echo "FAIL: the converted pprof reads back differently" >&2
  exit 1
fi

# heapprof top, flamegraph and diff take the .heapprofile directly.
"$heapprof" top "$input" -n 1000 >"$work/cli-top.txt"
grep -q '  retainSessionRecords  heap_prof_workload.js:' "$work/cli-top.txt" ||
  { echo "FAIL: heapprof top of the .heapprofile lacks retainSessionRecords" >&2; cat "$work/cli-top.txt" >&2; exit 1; }
"$heapprof" flamegraph "$input" -o "$work/cli.svg" >/dev/null
grep -q 'retainSessionRecords' "$work/cli.svg" ||
  { echo "FAIL: heapprof flamegraph of the .heapprofile lacks retainSessionRecords" >&2; exit 1; }
# The converted pprof and the .heapprofile are the same profile: no change.
"$heapprof" diff "$work/converted.pb.gz" "$input" >"$work/cli-diff.txt"
grep -q '^inuse_space: base .* (0 B, +0.0%)$' "$work/cli-diff.txt" ||
  { echo "FAIL: heapprof diff of a profile against its own conversion" >&2; cat "$work/cli-diff.txt" >&2; exit 1; }
echo "ok heapprof CLI reads the .heapprofile"

go_env "$work"
fail=0
for type in alloc_space inuse_space inuse_objects; do
  expected="$(awk -v t="$type" '$1 == "total" && $2 == t {print $3}' "$work/imported.txt")"
  go tool pprof -top -unit=B -nodefraction=0 -nodecount=1000 -sample_index="$type" \
    "$work/converted.pb.gz" >"$work/top.$type.txt" 2>"$work/top.$type.err"
  got="$(pprof_total <"$work/top.$type.txt")"
  if [ -z "$expected" ] || [ "$got" != "$expected" ]; then
    echo "FAIL $type: go tool pprof total '$got', imported total '$expected'" >&2
    fail=1
  fi
  if ! grep -q ' retainSessionRecords$' "$work/top.$type.txt"; then
    echo "FAIL $type: retainSessionRecords missing from go tool pprof -top" >&2
    fail=1
  fi
  echo "ok $type: total $got"
done
if [ "$fail" -ne 0 ]; then cat "$work/top.inuse_space.txt" "$work/top.inuse_space.err" >&2; fi
exit "$fail"
