#!/usr/bin/env bash
# heapprof attach --continuous 1s --push against a real `node --inspect`
# target (tests/remote/node_target.mjs serving leak-worker.js): each
# DevTools window pushed to the stand-in store (push_store.mjs, the store's
# checks) as it closes, labelled from what attach knows of the target
# (service_name = its script's stem, runtime=node, version = the script's
# short SHA-256, replica = the inspector's HOST:PORT); the bytes open with go
# tool pprof and name the leak; the target going away ends the run with what
# was pushed counted. And the flags attach refuses with --push.
#   push_attach_test.sh <heapprof> <source dir> <work dir>
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
source "$here/lib.sh"
# shellcheck source=../pprof_readers/go_env.sh
source "$src/tests/pprof_readers/go_env.sh"
go_env "$work/go"
export HEAPPROF_JS_DIR="$src/tests/js"
node="$(command -v node)"
target="$src/tests/remote/node_target.mjs"
store_pid="" node_pid=""
trap 'kill -9 ${store_pid:-} ${node_pid:-} 2>/dev/null || true' EXIT

start_store() {
  rm -f "$1.port"
  "$node" "$here/push_store.mjs" "$1.port" "$1" "${2:-}" 2>"$1.store.err" &
  store_pid=$!
  for _ in $(seq 1 100); do [ -s "$1.port" ] && break; sleep 0.1; done
  store_port="$(cat "$1.port")"
}
start_node() {
  "$node" --inspect=127.0.0.1:0 "$target" 2>"$1.node.err" &
  node_pid=$!
  for _ in $(seq 1 100); do
    inspector="$(sed -n 's#^Debugger listening on ws://\(127.0.0.1:[0-9]*\)/.*#\1#p' "$1.node.err")"
    if [ -n "$inspector" ] && grep -q "node target ready" "$1.node.err"; then return 0; fi
    sleep 0.1
  done
  fail "the node target did not start"
  return 1
}

# --- refused up front
expect_exit 2 attach-no-continuous -- "$heapprof" attach 127.0.0.1:9 --push http://127.0.0.1:9
expect_in attach-no-continuous.err "--continuous 60s"
expect_exit 2 attach-leaks -- "$heapprof" attach 127.0.0.1:9 --leaks --continuous 1s
expect_exit 2 attach-flamegraph -- "$heapprof" attach 127.0.0.1:9 --continuous 1s --flamegraph x.html
expect_exit 2 attach-tenant-alone -- "$heapprof" attach 127.0.0.1:9 --continuous 1s --push-tenant t
expect_in attach-tenant-alone.err "without --push URL nothing is pushed"

# --- 1 s windows (in-use) for 3.5 s, pushed; the store fails the first request
start_store ok 503
start_node node
expect_exit 0 pushed -- "$heapprof" attach "$inspector" --continuous 1s --duration 3.5s --sample-types inuse \
  --interval 32KiB --allow-inlining --push "http://127.0.0.1:$store_port" --push-label team=shop
kill "$store_pid"; wait "$store_pid" 2>/dev/null || true
expect_in pushed.out "1 failed request retried"
if grep -q "dropped\|refused by the store\|not pushed" pushed.out; then fail "windows lost: $(cat pushed.out)"; fi
[ ! -e heapprof-attach.pb.gz ] && [ -z "$(ls ./*.pb.gz 2>/dev/null)" ] || fail "attach --push wrote files without -o"
sent="$(sed -n 's/^pushed \([0-9]*\) windows.*/\1/p' pushed.out)"
[ -n "$sent" ] && [ "$sent" -ge 3 ] || fail "attach pushed $sent windows in 3.5 s of 1 s windows"
script_version="$(sha256sum "$target" | cut -c1-12)"
"$node" "$here/push_check.mjs" ok/log.jsonl "$sent" __name__=memory service_name=node_target __delta__=false \
  runtime=node "replica=$inspector" team=shop "version=$script_version" \
  >accepted.txt 2>accepted.err || fail "the store's log: $(cat accepted.err)"
echo "attach: $(head -1 accepted.txt) series accepted"
last="$(sed -n '$p' accepted.txt)"
go tool pprof -top -nodefraction=0 -sample_index=inuse_space "$last" >last.top 2>last.err ||
  fail "go tool pprof -top on a pushed profile: $(cat last.err)"
expect_in last.top "retainSession"

# --- with -o, files too; then the target goes away mid-run: the run ends, exit 1, what was pushed counted
start_store gone
mkdir -p files
expect_exit 1 away -- bash -c "(sleep 2.5; kill $node_pid) & exec \"$heapprof\" attach $inspector --continuous 1s \
  --sample-types inuse --interval 32KiB --allow-inlining --push http://127.0.0.1:$store_port -o files/t.pb.gz"
[ -n "$(ls files/*.pb.gz 2>/dev/null)" ] || fail "attach --push -o wrote no window files"
expect_in away.err "the windows ended"
expect_in away.out "pushed "
kill "$store_pid"; wait "$store_pid" 2>/dev/null || true

finish
