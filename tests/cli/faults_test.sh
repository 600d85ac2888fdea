#!/usr/bin/env bash
# Faults around the CLI's outputs and signals:
# - unwritable output paths (a regular file used as a directory, /proc, a full
#   disk as /dev/full or a file-size limit) for run, flamegraph and symbolize:
#   a clear message, exit 1, no partial file and no stray temporary file;
# - SIGINT / SIGTERM during `heapprof run` (one isolate, --replicas, --continuous):
#   the profile of the window so far is written (valid for go tool pprof), the
#   message says so, exit 130 / 143.
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
source "$here/lib.sh"
# shellcheck source=../pprof_readers/go_env.sh
source "$src/tests/pprof_readers/go_env.sh"
go_env "$work/go"

clean="$examples/clean.js"
stored="$src/tests/cli/data/prometheus-leak.pb.gz"

# No file but the ones listed is in the work directory (besides go/ and the
# commands' .out/.err/.top/.pprof logs).
only_files() {
  local what="$1"
  shift
  local expected actual
  expected="$(printf '%s\n' "$@" | sort | tr '\n' ' ')"
  actual="$(ls -A | grep -Ev '^go$|\.(out|err|top|pprof)$' | sort | tr '\n' ' ')"
  [ "$actual" = "$expected" ] || fail "$what: files left: $actual (expected: $expected)"
}

# Removes every output of earlier cases, keeping the fixtures.
tidy() {
  find . -maxdepth 1 -mindepth 1 ! -name go ! -name '*.js' ! -name plain -exec rm -rf {} +
}

# --- unwritable outputs -------------------------------------------------------

echo "not a directory" >plain
printf 'const kept = [];\nfunction remember(r) { for (let i = 0; i < 50; ++i) kept.push({ url: r.url, i }); if (kept.length > 100000) kept.length = 0; }\nlet n = 0;\nexport default { fetch(r) { remember(r); if (++n === 2000) console.log("window-open"); return new Response("ok"); } };\n' >serve.js

# A regular file used as a directory: found before the run starts.
expect_exit 1 run-under-file -- "$heapprof" run "$clean" --requests 50 -o plain/out.pb.gz
expect_in run-under-file.err "cannot write plain/out.pb.gz: plain is not a directory"
expect_exit 1 run-flamegraph-under-file -- "$heapprof" run "$clean" --requests 50 -o ok.pb.gz --flamegraph plain/fg.html
expect_in run-flamegraph-under-file.err "plain is not a directory"
expect_exit 1 flamegraph-under-file -- "$heapprof" flamegraph "$stored" -o plain/fg.html
expect_in flamegraph-under-file.err "cannot write plain/fg.html: plain is not a directory"
expect_exit 1 symbolize-under-file -- "$heapprof" symbolize "$stored" -o plain/sym.pb.gz
expect_in symbolize-under-file.err "cannot write plain/sym.pb.gz: plain is not a directory"
[ "$(cat plain)" = "not a directory" ] || fail "plain was modified"
only_files "under a regular file" plain serve.js

# /proc accepts no new files, even from root.
expect_exit 1 run-proc -- "$heapprof" run "$clean" --requests 50 -o /proc/self/heapprof.pb.gz
expect_in run-proc.err "cannot create a file in '/proc/self'"
expect_exit 1 flamegraph-proc -- "$heapprof" flamegraph "$stored" -o /proc/self/fg.html
expect_in flamegraph-proc.err "cannot create a file in '/proc/self'"
[ ! -e /proc/self/heapprof.pb.gz ] || fail "a file appeared in /proc/self"

# A full disk: /dev/full fails every write with ENOSPC, and stays a device.
# run keeps the profile: the tables are printed and it goes to the temporary folder.
mkdir fallback
TMPDIR="$work/fallback" expect_exit 1 run-full -- "$heapprof" run "$clean" --requests 50 -o /dev/full
expect_in run-full.err "No space left on device"
expect_in run-full.err "the profile is written to $work/fallback/full instead"
rm -r fallback
expect_exit 1 flamegraph-full -- "$heapprof" flamegraph "$stored" -o /dev/full
expect_in flamegraph-full.err "No space left on device"
expect_exit 1 symbolize-full -- "$heapprof" symbolize "$stored" -o /dev/full
expect_in symbolize-full.err "No space left on device"
[ -c /dev/full ] || fail "/dev/full is no longer a character device"
# Printing to a full stdout is an error too, not a crash or a silent success.
expect_exit 1 top-stdout-full -- sh -c '"$0" top "$1" >/dev/full' "$heapprof" "$stored"
expect_in top-stdout-full.err "No space left on device"

# A file-size limit (ulimit -f, SIGXFSZ ignored): the write fails part-way;
# neither the output nor a temporary file is left, an older output survives.
limited() {  # limited <KiB> <command...>: stdout to /dev/null, stderr to the caller
  local kib="$1"
  shift
  (trap '' XFSZ && ulimit -f "$kib" && exec "$@" >/dev/null)
}
got=0
limited 2 "$heapprof" flamegraph "$stored" -o fg.html 2>flamegraph-fsize.err || got=$?
[ "$got" = 1 ] || fail "flamegraph under ulimit -f: exit $got, expected 1"
expect_in flamegraph-fsize.err "File too large"
only_files "flamegraph under ulimit -f" plain serve.js

echo "older profile" >old.pb.gz
got=0
limited 1 "$heapprof" run serve.js --requests 2000 --interval 1KiB -o old.pb.gz 2>run-fsize.err || got=$?
[ "$got" = 1 ] || fail "run under ulimit -f: exit $got, expected 1"
expect_in run-fsize.err "File too large"
[ "$(cat old.pb.gz)" = "older profile" ] || fail "run under ulimit -f replaced the older file"
only_files "run under ulimit -f" plain serve.js old.pb.gz
tidy

# --- signals during heapprof run ----------------------------------------------

# start_run <name> <marker> <args...>: starts heapprof run in the background
# with SIGINT at its default (a script's background jobs ignore it) and waits
# until the worker prints <marker> on stderr.
start_run() {
  local name="$1" marker="$2"
  shift 2
  env --default-signal=INT "$heapprof" run "$@" >"$name.out" 2>"$name.err" &
  run_pid=$!
  for _ in $(seq 600); do
    grep -qF -- "$marker" "$name.err" && return 0
    kill -0 "$run_pid" 2>/dev/null || break
    sleep 0.1
  done
  fail "$name: the worker never printed $marker"
  sed 's/^/    /' "$name.err" >&2
}

# stop_run <name> <signal> <expected exit>: signals the run and checks its exit code.
stop_run() {
  local name="$1" signal="$2" want="$3" got=0
  kill "-$signal" "$run_pid"
  wait "$run_pid" || got=$?
  if [ "$got" != "$want" ]; then
    fail "$name: exit code $got after SIG$signal, expected $want"
    sed 's/^/    /' "$name.err" >&2
  fi
}

# valid_profile <name> <file> <function>: heapprof and go tool pprof read it and see the function
# among what the window allocated (alloc_space). Not in inuse_space: serve.js empties `kept` every
# 2000 requests, one request after its marker, so what is still in use depends on how many requests
# the signal lets through (polling every 2 ms, 1 run of 15 stopped inside request 2001 and
# `remember` had no in-use sample). Every window here holds >= 1800 requests of `remember`: over 63
# runs it allocated 5.9-20.9 MiB, >= 1500 samples at 4 KiB, so it is never missing by chance.
valid_profile() {
  local name="$1" file="$2" fn="$3"
  [ -s "$file" ] || { fail "$name: no profile at $file"; return; }
  "$heapprof" top --cum -s alloc_space -n 1000 "$file" >"$name.top" 2>&1 ||
    fail "$name: heapprof top cannot read $file"
  expect_in "$name.top" "$fn"
  go tool pprof -top -sample_index=alloc_space "$file" >"$name.pprof" 2>&1 ||
    fail "$name: go tool pprof cannot read $file"
  has_row "$name.pprof" "$fn"
}

# has_row <pprof -top output> <function>: a table row names the function.
has_row() {
  grep -qE " $2\$" "$1" || { fail "$1 has no row for $2"; sed 's/^/    /' "$1" >&2; }
}

# Between requests: the window so far is written.
start_run sigint "window-open" serve.js --duration 120s --interval 4KiB -o sigint.pb.gz
stop_run sigint INT 130
expect_in sigint.err "interrupted by SIGINT after"
expect_in sigint.err "writing the profile of the window so far"
expect_in sigint.out "Wrote sigint.pb.gz"
valid_profile sigint sigint.pb.gz remember
only_files "after SIGINT" plain serve.js sigint.pb.gz
tidy

# SIGTERM does the same, with 143.
start_run sigterm "window-open" serve.js --duration 120s --interval 4KiB -o sigterm.pb.gz
stop_run sigterm TERM 143
expect_in sigterm.err "interrupted by SIGTERM after"
valid_profile sigterm sigterm.pb.gz remember
tidy

# Inside a request that never returns: the isolate's JS is terminated from
# another thread, and the window up to then is written.
printf 'const kept = [];\nfunction retain() { for (let i = 0; i < 20000; ++i) kept.push({ i, pad: new Array(16).fill(i) }); }\nfunction spin() { const ring = []; for (let i = 0; ; ++i) { ring[i & 255] = { i, s: "x" + i }; if (i === 300000) console.log("spinning"); } }\nlet n = 0;\nexport default { fetch() { if (++n === 300) { retain(); spin(); } return new Response("ok"); } };\n' >spin.js
start_run spin "spinning" spin.js --duration 120s --interval 64KiB -o spin.pb.gz
stop_run spin INT 130
expect_in spin.err "interrupted by SIGINT after 299 requests"
valid_profile spin spin.pb.gz retain
has_row spin.pprof spin
tidy

# During the warm-up there is no window: nothing is written.
printf 'let n = 0;\nexport default { fetch() { if (++n === 50) console.log("warming"); return new Response("ok"); } };\n' >warm.js
start_run warm "warming" warm.js --duration 120s --warmup 100s -o warm.pb.gz
stop_run warm INT 130
expect_in warm.err "interrupted by SIGINT during the warm-up"
expect_in warm.err "no profile written"
[ ! -e warm.pb.gz ] || fail "warm: a profile was written without a window"
only_files "SIGINT during the warm-up" plain serve.js spin.js warm.js
tidy

# Through the controller: --replicas writes each replica's window so far, and
# --continuous its last, partial window; the written windows stay. (The marker
# comes long after the 1 ms warm-up, so the windows are open by then.)
printf 'const kept = [];\nfunction remember(r) { for (let i = 0; i < 50; ++i) kept.push({ url: r.url, i }); if (kept.length > 100000) kept.length = 0; }\nlet n = 0;\nexport default { fetch(r) { remember(r); if (++n === 20000) console.log("window-open"); return new Response("ok"); } };\n' >serve.js
start_run replicas "window-open" serve.js --replicas 2 --duration 300s --warmup 1ms --interval 4KiB -o rep.pb.gz
stop_run replicas INT 130
expect_in replicas.err "interrupted by SIGINT; the windows ended early and what they held was written"
expect_in replicas.out "Wrote rep-serve-0.pb.gz"
expect_in replicas.out "Wrote rep-serve-1.pb.gz"
valid_profile replicas-0 rep-serve-0.pb.gz remember
valid_profile replicas-1 rep-serve-1.pb.gz remember
only_files "SIGINT with --replicas" plain serve.js spin.js warm.js rep-serve-0.pb.gz rep-serve-1.pb.gz
tidy

mkdir rolling
start_run continuous "window-open" serve.js --continuous 300s --duration 600s --warmup 1ms --interval 4KiB \
  -o rolling/x.pb.gz
stop_run continuous TERM 143
expect_in continuous.out "Continuous: 1 profile of 300000 ms windows written to rolling/ (0 failed)"
rolled="$(ls rolling)"
[ "$(printf '%s\n' "$rolled" | grep -c '^serve-[0-9]*\.pb\.gz$')" = 1 ] || fail "continuous: expected one partial window, got: $rolled"
valid_profile continuous "rolling/$rolled" remember

# During the replicas' warm-up no window is open: nothing is written.
start_run replicas-warm "window-open" serve.js --replicas 2 --duration 300s --warmup 200s -o warm.pb.gz
stop_run replicas-warm INT 130
expect_in replicas-warm.err "serve-0: interrupted by SIGINT during the warm-up"
expect_in replicas-warm.err "no profile written"
[ -z "$(ls warm*.pb.gz 2>/dev/null)" ] || fail "replicas-warm: a profile was written without a window"

finish
