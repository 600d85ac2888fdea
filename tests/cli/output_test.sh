#!/usr/bin/env bash
# Golden tests of the CLI's text: `heapprof top` on a stored profile must
# match its golden file exactly; `heapprof run` must match its golden file
# once numbers are masked, and its numbers are then checked by tolerance.
# Set HEAPPROF_UPDATE_GOLDEN=1 to rewrite the golden files after a deliberate change.
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
source "$here/lib.sh"
golden="$here/golden"

compare() {
  local actual="$1" expected="$2"
  if [ "${HEAPPROF_UPDATE_GOLDEN:-0}" = 1 ]; then
    cp "$actual" "$expected"
    return
  fi
  if ! diff -u "$expected" "$actual" >"$actual.diff"; then
    fail "$(basename "$expected") differs:"
    cat "$actual.diff" >&2
  fi
}

# 1. heapprof top on a stored profile (written by `heapprof run` on prometheus-leak.js): exact.
profile="$here/data/prometheus-leak.pb.gz"
expect_exit 0 top-default -- "$heapprof" top "$profile"
compare top-default.out "$golden/top_default.txt"
expect_exit 0 top-alloc -- "$heapprof" top "$profile" --sample-index alloc_space -n 5
compare top-alloc.out "$golden/top_alloc_space.txt"
expect_exit 0 top-cum -- "$heapprof" top "$profile" -s inuse_objects -n 4 --cum
compare top-cum.out "$golden/top_inuse_objects_cum.txt"

# 2. heapprof run (sampling every 64 KiB, so that the culprit's lead is far
# above sampling noise): the text with numbers masked, and only the first row of
# each table (the rows below it depend on sampling, and so does the legend
# explaining the kinds of rows shown).
expect_exit 0 run -- "$heapprof" run "$examples/prometheus-leak.js" --requests 6000 --warmup 100 --interval 64KiB --top 5 -o leak.pb.gz
awk '
  skip && /^$/ { skip = 0 }
  skip { next }
  { print }
  /flat%/ { getline; print; skip = 1 }
' run.out | sed -E \
  -e 's/[0-9]+(\.[0-9]+)? (B|KiB|MiB|GiB)/<bytes>/g' \
  -e 's/[0-9]+(\.[0-9]+)? (ms|s)\b/<time>/g' \
  -e 's/[0-9]+(\.[0-9]+)?%/<pct>/g' \
  -e 's/±[0-9]+(\.[0-9]+)?/±<pts>/g' \
  -e 's/ \(shares are ±<pts> points: too few samples to be sure\)//' \
  -e 's/, <pct> of that through the built-ins and runtime functions it calls//' \
  -e 's/from [0-9]+ samples?/from <n> samples/g' \
  -e 's/[0-9]+ functions; top [0-9]+ by/<n> functions; top <n> by/g' \
  -e 's/prometheus-leak.js:[0-9]+/prometheus-leak.js:<line>/g' \
  -e 's/ +/ /g' |
  grep -vE '^(Rows without a file|their caller|runtime builds|\(anonymous\) without a file|heapprof:runtime|at the line of the package|The answers below charge)' | cat -s >run.masked
compare run.masked "$golden/run_prometheus_leak.txt"

# Numbers, by tolerance.
expect_in run.out "prometheus-leak.js (module worker): 6000 requests in"
expect_in run.out "window   5900 requests,"
expect_in run.out "after a warm-up of 100 requests"
expect_in run.out "one sample per 64.0 KiB allocated"
expect_in run.out "used of the 128 MiB limit"
[ -s leak.pb.gz ] || fail "run: no profile written"
# The shares of a table's rows add up: the last sum% of a full table is 100%.
expect_exit 0 top-all -- "$heapprof" top leak.pb.gz -s alloc_space -n 1000
last_sum="$(awk '$4 ~ /^±/ {s = $5} END {print s}' top-all.out)"  # flat (2 fields), flat%, its ±, sum%
[ "$last_sum" = "100.0%" ] || fail "the sum% column of a full table ends at $last_sum, not 100.0%"
# The table's total is the profile's: heapprof top and heapprof run agree.
run_total="$(awk '$1 == "inuse_space:" {print $3, $4; exit}' run.out)"
top_total="$(awk '$1 == "inuse_space:" {print $3, $4; exit}' <("$heapprof" top leak.pb.gz))"
[ "$run_total" = "$top_total" ] || fail "inuse_space total: run says $run_total, top says $top_total"
# Roughly 300-600 bytes stay in use per request in the leak (a series per new label set).
awk -v t="$run_total" 'BEGIN {
  split(t, p, " "); v = p[1]; u = p[2]; sub(/,$/, "", u);
  m = (u == "KiB") ? 1024 : (u == "MiB") ? 1048576 : (u == "GiB") ? 1073741824 : 1;
  per = v * m / 5900; exit !(per > 150 && per < 3000)
}' || fail "in-use bytes per request outside 150..3000: total $run_total for 5900 requests"

# heapprof run --interval auto (the default): the interval from the heap limit, said in the report.
expect_exit 0 run-auto -- "$heapprof" run "$examples/prometheus-leak.js" --requests 300 --heap-limit 256 --top 1 -o auto.pb.gz
expect_in run-auto.out "one sample per 128 KiB allocated"
expect_in run-auto.out "(--interval auto: 128 KiB gives a function holding 5 % of the 256 MiB heap limit ~100 samples)"
expect_exit 2 run-bad-interval -- "$heapprof" run "$examples/prometheus-leak.js" --interval often
expect_in run-bad-interval.err 'not a size: "often"'

finish
