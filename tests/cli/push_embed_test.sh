#!/usr/bin/env bash
# The push hook of the C++ API (examples/push/push.cpp): an embedder's two
# isolates, one per Durable-Object-style object, under continuous windows
# whose sink is remote::PushingSink; the stand-in store (push_store.mjs, the
# store's checks) gets every window of both objects labelled
# durable_object=<id> with the embedder's identity, through a 503; the bytes
# open with go tool pprof and name what each object keeps.
#   push_embed_test.sh <heapprof_push_example> <source dir> <work dir>
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
source "$here/lib.sh"
# shellcheck source=../pprof_readers/go_env.sh
source "$src/tests/pprof_readers/go_env.sh"
go_env "$work/go"
export HEAPPROF_JS_DIR="$src/tests/js"
node="$(command -v node)"
example="$heapprof"
store_pid=""
trap 'kill -9 ${store_pid:-} 2>/dev/null || true' EXIT

"$node" "$here/push_store.mjs" store.port store 503 2>store.err &
store_pid=$!
for _ in $(seq 1 100); do [ -s store.port ] && break; sleep 0.1; done
expect_exit 0 pushed -- "$example" "http://127.0.0.1:$(cat store.port)" 2.5 500
kill "$store_pid"; wait "$store_pid" 2>/dev/null || true
expect_in pushed.out "1 failed request retried"
sent="$(sed -n 's/^pushed \([0-9]*\) windows.*/\1/p' pushed.out)"
# 2.5 s of 500 ms windows on two objects, and their last partial ones.
[ -n "$sent" ] && [ "$sent" -ge 8 ] || fail "the embedder pushed $sent windows"
for id in room:lobby room:support; do
  "$node" "$here/push_check.mjs" store/log.jsonl 1 __name__=memory service_name=chat-rooms __delta__=false \
    runtime=embedded version=v42 region=eu-west 'durable_object~^room:(lobby|support)$' \
    >accepted.txt 2>accepted.err || fail "the store's log: $(cat accepted.err)"
  n="$("$node" -e '
    const fs = require("fs");
    const lines = fs.readFileSync(process.argv[1], "utf8").trim().split("\n").map(JSON.parse);
    console.log(lines.filter((l) => l.status === 200).flatMap((l) => l.series)
      .filter((s) => s.labels.durable_object === process.argv[2] && !("replica" in s.labels)).length);
  ' store/log.jsonl "$id")"
  [ "$n" -ge 4 ] || fail "$n windows of $id accepted"
done
last="$(sed -n '$p' accepted.txt)"
go tool pprof -top -nodefraction=0 -sample_index=inuse_space "$last" >last.top 2>last.err ||
  fail "go tool pprof -top on a pushed profile: $(cat last.err)"
expect_in last.top "joinRoom"

finish
