#!/usr/bin/env bash
# `go tool pprof` (the reference reader) opens a heapprof profile: for each of
# the four sample types it prints our function names and the model's totals.
# Then pprof re-encodes the file with its own encoder and heapprof reads that
# back with the same totals.
#   go_pprof_test.sh <make_profile> <work dir>
set -euo pipefail
fixture="$1"
work="$2"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=go_env.sh
source "$here/go_env.sh"
rm -rf "$work" && mkdir -p "$work"
go_env "$work"

"$fixture" write "$work/worker.pb.gz" >"$work/expected.txt"
fail=0
for type in alloc_objects alloc_space inuse_objects inuse_space; do
  expected="$(awk -v t="$type" '$1 == "total" && $2 == t {print $3}' "$work/expected.txt")"
  go tool pprof -top -unit=B -nodefraction=0 -edgefraction=0 -nodecount=1000 -sample_index="$type" \
    "$work/worker.pb.gz" >"$work/top.$type.txt" 2>"$work/top.$type.err"
  got="$(pprof_total <"$work/top.$type.txt")"
  if [ "$got" != "$expected" ]; then
    echo "FAIL $type: go tool pprof total '$got', model total '$expected'" >&2
    fail=1
  fi
  grep -q "^Type: $type\$" "$work/top.$type.txt" || { echo "FAIL $type: pprof did not select it" >&2; fail=1; }
  while read -r name; do
    # (GC) allocated only garbage: it has nothing in use, so in-use tables omit it.
    if [ "$name" = "(GC)" ] && [ "${type#inuse}" != "$type" ]; then continue; fi
    if ! grep -qF -- " $name" "$work/top.$type.txt"; then
      echo "FAIL $type: '$name' missing from go tool pprof -top" >&2
      fail=1
    fi
  done < <(sed -n 's/^function //p' "$work/expected.txt")
  echo "ok $type: total $got"
done

# pprof's own encoder writes the profile back out; our reader must agree.
go tool pprof -proto "$work/worker.pb.gz" >"$work/reencoded.pb.gz" 2>"$work/reencode.err"
"$fixture" show "$work/reencoded.pb.gz" >"$work/reencoded.txt"
if ! diff <(grep '^total ' "$work/expected.txt") <(grep '^total ' "$work/reencoded.txt"); then
  echo "FAIL: totals differ after go tool pprof -proto" >&2
  fail=1
else
  echo "ok go tool pprof -proto output reads back with the same totals"
fi
if [ "$fail" -ne 0 ]; then
  echo "--- go tool pprof -top -sample_index=inuse_space:" >&2
  cat "$work/top.inuse_space.txt" "$work/top.inuse_space.err" >&2
fi
exit "$fail"
