#!/usr/bin/env bash
# heapprof run --profile NS:NAME profiles one Durable Object's isolate: of two
# objects of one class (tests/cli/data/durable_objects), STORES:leaky keeps
# what it makes and STORES:quiet drops it. The leak holds most of leaky's
# in-use bytes and none of quiet's, nor of the worker's own isolate (each
# object's isolate shares no JS heap with the worker's). By name or by id;
# the report lists both objects with their heap and requests; near the
# object's heap limit its in-use profile is captured, named for it; an
# object idle past --object-idle-limit is evicted and keeps its storage.
#   durable_objects_test.sh <heapprof> <source dir> <work dir>
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
source "$here/lib.sh"
app="$src/tests/cli/data/durable_objects"

run_top() {  # run_top <name> <run flags...>: the run, then go tool pprof -top of its in-use space
  local name="$1"
  shift
  expect_exit 0 "$name" -- "$heapprof" run "$app" -n 2000 --interval 16KiB --top 0 -o "$name.pb.gz" "$@"
  go tool pprof -top -sample_index=inuse_space "$name.pb.gz" >"$name.top" 2>/dev/null ||
    fail "go tool pprof could not read $name.pb.gz"
}

run_top leaky --profile STORES:leaky
read -r leak_flat _ <<<"$(pprof_shares leaky.top leakRecord)"
awk -v v="$leak_flat" 'BEGIN { exit !(v >= 60) }' || fail "leakRecord holds $leak_flat % of STORES:leaky's in-use bytes (expected >= 60 %)"
expect_in leaky.err "the window on Durable Object STORES:leaky opened at its creation (request #1)"
expect_in leaky.out "STORES:leaky  heap "
expect_in leaky.out "  1000 requests"
expect_in leaky.out "STORES:quiet  heap "
expect_in leaky.out "no request failed"

run_top quiet --profile STORES:quiet
read -r quiet_flat quiet_cum <<<"$(pprof_shares quiet.top leakRecord)"
awk -v v="$quiet_cum" 'BEGIN { exit !(v <= 5) }' || fail "leakRecord holds $quiet_cum % of STORES:quiet's in-use bytes (expected <= 5 %)"
expect_in quiet.err "the window on Durable Object STORES:quiet opened at its creation (request #2)"

# The worker's own isolate: the objects' bytes are not in its profile.
run_top worker
read -r worker_flat worker_cum <<<"$(pprof_shares worker.top leakRecord)"
[ "$worker_flat $worker_cum" = "0 0" ] || fail "leakRecord appears in the worker's own profile ($worker_flat % flat, $worker_cum % cum)"

# By the 64-hex id (workerd's for the unique key "do-profiles-Store"), in either case.
hex="$(node -e '
  const c = require("crypto");
  const key = c.createHash("sha256").update("do-profiles-Store").digest();
  const first = c.createHmac("sha256", key).update("leaky").digest().subarray(0, 16);
  const last = c.createHmac("sha256", key).update(first).digest().subarray(0, 16);
  console.log(Buffer.concat([first, last]).toString("hex").toUpperCase());')"
run_top by-id --profile "STORES:$hex"
read -r id_flat _ <<<"$(pprof_shares by-id.top leakRecord)"
awk -v v="$id_flat" 'BEGIN { exit !(v >= 60) }' || fail "by id: leakRecord holds $id_flat % (expected >= 60 %)"

# Near its heap limit the object's window closes with its in-use profile,
# which names the object; the worker's isolate is far from its own limit.
expect_exit 1 near -- "$heapprof" run "$app" -n 100000 --heap-limit 24MiB --interval 16KiB --top 0 \
  --profile STORES:leaky -o near.pb.gz
expect_in near.err "Durable Object STORES:leaky neared its heap limit at request #"
expect_in near.out "Wrote the in-use profile captured near the heap limit to near.pb.gz"
go tool pprof -top -sample_index=inuse_space near.pb.gz >near.top 2>/dev/null || fail "go tool pprof could not read near.pb.gz"
expect_in near.top "isolate: STORES:leaky"
read -r near_flat _ <<<"$(pprof_shares near.top leakRecord)"
awk -v v="$near_flat" 'BEGIN { exit !(v >= 60) }' || fail "near the limit: leakRecord holds $near_flat % (expected >= 60 %)"

# --object-idle-limit: an object idle past it is evicted and made anew at its
# next request, its storage kept (the count reaches 7) and its module globals
# not (each isolate counts from 1); the worker waits 5 ms of real time before
# each call, so the object is always idle past 1 ms.
mkdir -p idle
cat >idle/wrangler.toml <<'TOML'
name = "idle"
main = "worker.js"

[[durable_objects.bindings]]
name = "COUNTER"
class_name = "Counter"
TOML
cat >idle/worker.js <<'JS'
import { DurableObject } from 'cloudflare:workers';
let calls = 0;
export class Counter extends DurableObject {
  async bump() {
    const n = ((await this.ctx.storage.get('n')) ?? 0) + 1;
    await this.ctx.storage.put('n', n);
    return `${n} ${++calls}`;
  }
}
export default {
  async fetch(request, env) {
    const until = Date.now() + 5;
    while (Date.now() < until) {}
    return new Response(await env.COUNTER.getByName('hits').bump());
  },
};
JS
expect_exit 0 idle-kept -- "$heapprof" run idle -n 7 --warmup 0 --top 0 -o idle.pb.gz --responses-out idle-kept.jsonl
expect_exit 0 idle-evicted -- "$heapprof" run idle -n 7 --warmup 0 --top 0 -o idle.pb.gz --object-idle-limit 1ms \
  --responses-out idle-evicted.jsonl
last_body() { tail -n 1 "$1" | node -e 'process.stdin.on("data", d => console.log(JSON.parse(d).body))'; }
[ "$(last_body idle-kept.jsonl)" = "7 7" ] || fail "without eviction: $(tail -n 1 idle-kept.jsonl)"
[ "$(last_body idle-evicted.jsonl)" = "7 1" ] || fail "evicted each time: $(tail -n 1 idle-evicted.jsonl)"
expect_in idle-evicted.out "COUNTER:hits  heap "
expect_in idle-evicted.out "6 restarts"
expect_exit 2 idle-bad -- "$heapprof" run idle -n 7 --object-idle-limit soon -o idle.pb.gz
# A worker that binds no Durable Object: the flag would do nothing, so both commands refuse it.
expect_exit 2 idle-no-objects -- "$heapprof" run "$src/examples/workers/clean.js" -n 3 --object-idle-limit 1s -o x.pb.gz
expect_in idle-no-objects.err "--object-idle-limit evicts idle Durable Objects"
expect_exit 2 serve-idle-no-objects -- timeout 20 "$heapprof" serve "$src/examples/workers/clean.js" --object-idle-limit 1s \
  --listen 127.0.0.1:0 --debug-listen 127.0.0.1:0
expect_in serve-idle-no-objects.err "--object-idle-limit evicts idle Durable Objects"

# Refused up front, or said after the run: no name; an object no request reached.
expect_exit 2 no-name -- "$heapprof" run "$app" -n 10 --profile STORES: -o x.pb.gz
expect_in no-name.err "name the object (NS:NAME"
expect_exit 2 with-leaks -- "$heapprof" run "$app" -n 10 --profile STORES:leaky --leaks -o x.pb.gz
expect_in with-leaks.err "a Durable Object gets one window"
expect_exit 1 nobody -- "$heapprof" run "$app" -n 10 --profile STORES:nobody -o x.pb.gz
expect_in nobody.err "--profile STORES:nobody: that Durable Object received no event in the run"
[ ! -e x.pb.gz ] || fail "a profile was written for an object that never ran"

finish
