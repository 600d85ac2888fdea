#!/usr/bin/env bash
# One engine under every mode of `heapprof run`: each flag works with one
# isolate, --replicas and --continuous, or is refused up front (exit 2). Also
# a failing request inside the window ends the run cleanly (exit 1, message,
# the window so far written), never with a V8 abort.
#   modes_test.sh <heapprof> <source dir> <work dir>
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
leak="$examples/prometheus-leak.js"

# comment_of <profile> <key>: the value of a "key: value" comment in the profile.
comment_of() { go tool pprof -comments "$1" 2>/dev/null | sed -n "s/^$2: //p" | head -1; }

# The issue's example: --requests stops each replica, --flamegraph writes each page.
expect_exit 0 example -- "$heapprof" run "$leak" --replicas 2 --duration 20s --requests 400 --interval 8KiB \
  --flamegraph x.html -o x.pb.gz
expect_in example.out "prometheus-leak-0: served 400 requests"
expect_in example.out "prometheus-leak-1: served 400 requests"
expect_in example.out "window   200 requests, "
for i in 0 1; do
  [ -s "x-prometheus-leak-$i.pb.gz" ] || fail "example: no x-prometheus-leak-$i.pb.gz"
  grep -q "<html" "x-prometheus-leak-$i.html" 2>/dev/null || fail "example: no flamegraph page x-prometheus-leak-$i.html"
  # Inlining is recorded as heapprof set it (off by default) in every mode.
  [ "$(comment_of "x-prometheus-leak-$i.pb.gz" inlining)" = disabled ] || fail "example: replica $i's inlining comment is not 'disabled'"
done

# --sample-index and --top choose the tables with replicas too.
expect_exit 0 index -- "$heapprof" run "$leak" --replicas 2 --requests 600 --interval 16KiB --sample-index alloc_objects \
  --top 2 -o index.pb.gz
[ "$(grep -c '^alloc_objects:' index.out)" = 2 ] || fail "index: expected one alloc_objects table per replica"
if grep -q '^inuse_space:' index.out; then fail "index: an inuse_space table was printed"; fi

# --allow-inlining is recorded in a continuous run's files too.
mkdir -p inl
# (By time, not by request count: a fast machine served 3000 requests within one 150 ms window.)
expect_exit 0 inline -- "$heapprof" run "$leak" --continuous 150ms --duration 1500ms --warmup 10 --interval 16KiB \
  --allow-inlining -o inl/x.pb.gz --top 1
n="$(ls inl | wc -l)"
[ "$n" -ge 2 ] || fail "inline: expected >= 2 continuous windows, got $n"
for f in inl/*.pb.gz; do
  [ "$(comment_of "$f" inlining)" = allowed ] || fail "inline: $f does not record inlining as allowed"
done
expect_in inline.out "prometheus-leak: served "
expect_in inline.out "The last window of prometheus-leak.js"

# --from-start with replicas: start-up allocations are in each replica's window.
expect_exit 0 start -- "$heapprof" run "$examples/startup-table.js" --from-start --replicas 2 --requests 100 -o start.pb.gz
for i in 0 1; do
  "$heapprof" top "start-startup-table-$i.pb.gz" -n 1 >"start-$i.top" || fail "start: replica $i's profile unreadable"
  expect_in "start-$i.top" buildRedirectTable
done
expect_in start.out "from before the worker was loaded"

# --window closes one isolate's window (and ends its run) by time; --requests by count.
expect_exit 0 window -- "$heapprof" run "$leak" --window 300ms --warmup 10 --interval 64KiB -o window.pb.gz
expect_in window.out "after a warm-up of 10 requests"

# --on-heap-limit without reaching the limit: the normal profile, no near-limit file.
expect_exit 0 near-unused -- "$heapprof" run "$leak" --requests 500 --on-heap-limit near.pb.gz -o normal.pb.gz
[ -s normal.pb.gz ] || fail "near-unused: no profile"
[ ! -e near.pb.gz ] || fail "near-unused: a near-limit profile was written without reaching the limit"

# --continuous and --on-heap-limit: the capture near the limit sees every live
# sample, not only those since the last window closed (issue #36: 311 KiB of a
# 128 MiB heap). A worker keeping ~40 KiB a request reaches --heap-limit 32 after
# several 200 ms windows; the capture must hold at least half the limit in use.
cat >keeper.js <<'JS'
const kept = [];
export default {
  fetch() {
    for (let i = 0; i < 200; i++) kept.push({ pad: new Array(16).fill(kept.length) });
    return new Response('ok');
  },
};
JS
mkdir near-cont
expect_exit 1 near-cont -- "$heapprof" run keeper.js --continuous 200ms --heap-limit 32 --duration 60s \
  --on-heap-limit near-cont/near.pb.gz -o near-cont/w.pb.gz
expect_in near-cont.err "exceeded its heap limit of 32 MiB"
[ "$(ls near-cont/keeper-*.pb.gz 2>/dev/null | wc -l)" -ge 2 ] || fail "near-cont: fewer than 2 windows closed before the limit"
"$heapprof" top near-cont/near.pb.gz >near-cont.top 2>&1 || fail "near-cont: the capture does not parse: $(cat near-cont.top)"
inuse_mib="$(awk '/^inuse_space: total/ { v = $3; u = $4; if (u == "KiB") v /= 1024; if (u == "B") v = 0; if (u == "GiB") v *= 1024; print int(v); exit }' near-cont.top)"
[ "${inuse_mib:-0}" -ge 16 ] || fail "near-cont: the capture holds ${inuse_mib:-?} MiB in use of a 32 MiB limit: $(head -1 near-cont.top)"

# Refused up front: flags that cannot mean anything in the mode chosen.
expect_exit 2 cont-flame -- "$heapprof" run "$leak" --continuous 1s --flamegraph f.html
expect_in cont-flame.err "--flamegraph writes the page of one window"
expect_exit 2 cont-window -- "$heapprof" run "$leak" --continuous 1s --window 2s
expect_in cont-window.err "drop --window"
expect_exit 2 huge-warmup -- "$heapprof" run "$leak" --warmup 99999999999999999999999
expect_in huge-warmup.err "--warmup"
[ ! -e f.html ] || fail "cont-flame wrote f.html"

# A request that fails after the window opened is counted and the run goes on
# (no V8 abort, no core dump): exit 0, the error in the outcome report, the
# window written. Throw, rejection, stack overflow, a promise that never settles.
printf 'let n = 0;\nfunction keep(r) { globalThis.kept = (globalThis.kept || []).concat([r.url]); }\nexport default { fetch(r) { keep(r); if (++n === 40) throw new TypeError("bad tenant"); return new Response("ok"); } };\n' >late-throw.js
printf 'let n = 0;\nexport default { async fetch(r) { await null; if (++n === 40) throw new Error("session expired"); return new Response("ok"); } };\n' >late-reject.js
printf 'let n = 0;\nfunction down(i) { return down(i + 1) + 1; }\nexport default { fetch(r) { if (++n === 40) down(0); return new Response("ok"); } };\n' >late-overflow.js
printf 'let n = 0;\nexport default { fetch(r) { if (++n === 40) return new Promise(() => {}); return new Response("ok"); } };\n' >late-hang.js
for w in late-throw late-reject late-overflow late-hang; do
  for mode in one replicas; do
    extra=()
    [ "$mode" = replicas ] && extra=(--replicas 2)
    expect_exit 0 "$w-$mode" -- "$heapprof" run "$w.js" --warmup 10 --requests 100 --interval 1KiB "${extra[@]}" -o "$w-$mode.pb.gz"
    expect_in "$w-$mode.out" "(first at request #40)"
    if [ "$mode" = one ]; then
      expect_in "$w-$mode.out" "Wrote $w-$mode.pb.gz"
      "$heapprof" top "$w-$mode.pb.gz" -n 1 >/dev/null || fail "$w-$mode: the window's profile is unreadable"
    else
      [ -s "$w-$mode-$w-0.pb.gz" ] || fail "$w-$mode: replica 0's window was not written"
    fi
  done
done
expect_in late-throw-one.out "threw x1 (first at request #40): TypeError: bad tenant"
expect_in late-throw-replicas.out "threw x2 (first at request #40): TypeError: bad tenant"
expect_in late-reject-one.out "rejected x1 (first at request #40): the handler's promise was rejected: Error: session expired"
expect_in late-overflow-one.out "RangeError: Maximum call stack size exceeded"
expect_in late-hang-one.out "never settled"

# --replicas 2 --continuous with requests that sometimes throw (every 7th) or
# reject (every 11th): each failure is counted, both replicas keep serving and
# every window is written; above --max-failures the run exits 1, files written.
printf 'let n = 0;\nexport default { fetch(r) { ++n; if (n %% 7 === 0) throw new Error("flaky upstream"); if (n %% 11 === 0) return Promise.reject(new TypeError("bad token")); return new Response("ok " + n); } };\n' >flaky.js
for limit in 50% 5%; do
  dir="flaky-${limit%\%}"
  mkdir -p "$dir"
  code=0
  [ "$limit" = 5% ] && code=1
  expect_exit "$code" "$dir" -- "$heapprof" run flaky.js --replicas 2 --continuous 150ms --duration 1500ms --warmup 10 \
    --interval 4KiB --max-failures "$limit" -o "$dir/f.pb.gz"
  for i in 0 1; do
    n="$(ls "$dir" | grep -c "^flaky-$i-.*\.pb\.gz$")"
    [ "$n" -ge 2 ] || fail "$dir: expected >= 2 windows of replica $i, got $n"
  done
  for f in "$dir"/*.pb.gz; do "$heapprof" top "$f" -n 1 >/dev/null || fail "$dir: $f is unreadable"; done
  expect_in "$dir.out" "(first at request #7): Error: flaky upstream"
  expect_in "$dir.out" "(first at request #11): the handler's promise was rejected: TypeError: bad token"
done
expect_in flaky-5.err "--max-failures"

finish
