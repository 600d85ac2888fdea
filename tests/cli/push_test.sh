#!/usr/bin/env bash
# heapprof serve --continuous 2s --push against a stand-in for Pyroscope's
# push endpoint (push_store.mjs: its own schema, the store's checks):
# every closed window arrives as a well-formed series with the memory
# profile types and the labels; the pushed bytes open with go tool pprof as
# they came; a store answering 503/429 first loses nothing; a store that goes
# away costs windows beyond the queue bound, counted and reported, while the
# worker and the debug listener keep serving. And the flags' errors.
#   push_test.sh <heapprof> <source dir> <work dir>
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
source "$here/lib.sh"
# shellcheck source=serve_lib.sh
source "$here/serve_lib.sh"
# shellcheck source=../pprof_readers/go_env.sh
source "$src/tests/pprof_readers/go_env.sh"
go_env "$work/go"
export HEAPPROF_JS_DIR="$src/tests/js"
node="$(command -v node)"

store_pid=""
trap 'kill -9 ${serve_pid:-} ${store_pid:-} ${traffic_pid:-} 2>/dev/null || true' EXIT

# start_store <dir> [script]: the store on a free port; $store_port.
start_store() {
  rm -f "$1.port"
  "$node" "$here/push_store.mjs" "$1.port" "$1" "${2:-}" 2>"$1.store.err" &
  store_pid=$!
  for _ in $(seq 1 100); do [ -s "$1.port" ] && break; sleep 0.1; done
  store_port="$(cat "$1.port")"
}

# traffic for <seconds> on the worker, in the background.
traffic() {
  (end=$((SECONDS + $1)); i=0; while [ $SECONDS -lt $end ]; do
     curl -s -o /dev/null "$base/api/users/$i" || true; i=$((i + 1)); done) &
  traffic_pid=$!
}

# The worker as an app folder with a name in its config: the service_name.
mkdir -p app
cp "$examples/prometheus-leak.js" app/worker.js
printf 'name = "shop"\nmain = "worker.js"\n' >app/wrangler.toml
echo "push-token-0123456789" >token

# --- flags refused up front
expect_exit 2 push-no-period -- "$heapprof" serve app --push http://127.0.0.1:9/ --continuous
expect_in push-no-period.err "--continuous 60s"
expect_exit 2 push-no-continuous -- "$heapprof" serve app --push http://127.0.0.1:9/
expect_exit 2 push-label-alone -- "$heapprof" serve app --continuous 2s --push-label team=a
expect_in push-label-alone.err "without --push URL nothing is pushed"
expect_exit 2 push-ca-http -- "$heapprof" serve app --continuous 2s --push http://127.0.0.1:9 --push-ca-file token
expect_in push-ca-http.err "verifies an https:// store"
expect_exit 2 push-bad-label -- "$heapprof" serve app --continuous 2s --push http://127.0.0.1:9 --push-label team-name=a
expect_in push-bad-label.err "team-name"
expect_exit 2 push-reserved -- "$heapprof" serve app --continuous 2s --push http://127.0.0.1:9 --push-label __delta__=true
expect_exit 2 push-period-word -- "$heapprof" serve app --continuous often
expect_in push-period-word.err "--continuous"

# --- 2 s windows on two replicas, the store failing the first three requests (503, 429, 503)
start_store ok 503,429,503
start_serve pushed app --replicas 2 --interval 16KiB --continuous 2s --push "http://127.0.0.1:$store_port" \
  --push-label team=shop --push-token-file token --push-tenant tenant-7
# Before the first window closes the scrape says so (503); after, it is the last closed window.
[ "$(status_of "$debug/debug/pprof/heap?target=0")" = 503 ] || fail "the scrape before the first window closed is not 503"
traffic 7
sleep 7.5
wait "$traffic_pid" || true
[ "$(curl -s -o scraped.pb.gz -w '%{http_code}' --max-time 60 "$debug/debug/pprof/heap?target=0")" = 200 ] || fail "the scrape of the last window is not 200"
"$heapprof" top scraped.pb.gz >scraped.top 2>&1 || fail "the scraped window does not open"
# The push's counters on the debug index.
curl -s --max-time 10 "$debug/debug/pprof/" >index.html || fail "the debug index does not answer"
expect_in index.html "Push to http://127.0.0.1:$store_port"
expect_in index.html "<tr><th>retried requests</th><td>3</td></tr>"
expect_in index.html "<tr><th>windows dropped (queue full)</th><td>0</td></tr>"
expect_in index.html "<th>queued bytes</th>"
expect_in index.html "<tr><th>last error</th><td>HTTP 503"
sent="$(sed -n 's#.*<tr><th>windows sent</th><td>\([0-9]*\)</td></tr>.*#\1#p' index.html)"
[ -n "$sent" ] && [ "$sent" -ge 4 ] || fail "the index counts $sent windows sent after 7.5 s of 2 s windows on two replicas"
kill -TERM "$serve_pid"
code=0; wait "$serve_pid" || code=$?
[ "$code" -eq 0 ] || fail "serve --push exited $code with every window pushed"
kill "$store_pid"; wait "$store_pid" 2>/dev/null || true
expect_in pushed.out "continuous: "
expect_in pushed.out "failed requests retried"
if grep -q "dropped\|refused by the store\|not pushed" pushed.out; then fail "windows were lost: $(grep pushed pushed.out)"; fi
expect_in pushed.err "failed (HTTP 503"
expect_in pushed.err "works again"

# What the store accepted: at least 3 windows per replica (7.5 s of 2 s windows, and the last partial ones).
"$node" -e '
  const fs = require("fs");
  const lines = fs.readFileSync(process.argv[1], "utf8").trim().split("\n").map(JSON.parse);
  const ok = lines.filter((l) => l.status === 200);
  const refused = lines.filter((l) => l.status === 400);
  if (refused.length) { console.error("refused by the checks:", refused.map((l) => l.error)); process.exit(1); }
  const scripted = lines.filter((l) => [503, 429].includes(l.status)).length;
  if (scripted !== 3) { console.error("scripted failures seen:", scripted); process.exit(1); }
  const series = ok.flatMap((l) => l.series);
  const want = ["memory:alloc_objects:count:space:bytes", "memory:alloc_space:bytes:space:bytes",
                "memory:inuse_objects:count:space:bytes", "memory:inuse_space:bytes:space:bytes"];
  const perReplica = {};
  for (const s of series) {
    const l = s.labels;
    const expect = { __name__: "memory", service_name: "shop", __delta__: "false", runtime: "embedded",
                     heapprof_version: "0.1.0", team: "shop" };
    for (const [k, v] of Object.entries(expect)) if (l[k] !== v) { console.error("label", k, "=", l[k]); process.exit(1); }
    if (!/^[0-9a-f]{12}$/.test(l.version)) { console.error("version", l.version); process.exit(1); }
    if (!["worker-0", "worker-1"].includes(l.replica)) { console.error("replica", l.replica); process.exit(1); }
    perReplica[l.replica] = (perReplica[l.replica] || 0) + 1;
    for (const smp of s.samples) {
      if (JSON.stringify(smp.types) !== JSON.stringify(want)) { console.error("types", smp.types); process.exit(1); }
    }
  }
  for (const r of ["worker-0", "worker-1"]) {
    if ((perReplica[r] || 0) < 3) { console.error("windows of", r, ":", perReplica[r]); process.exit(1); }
  }
  const h = ok[0].headers;
  if (h.authorization !== "Bearer push-token-0123456789") { console.error("authorization", h.authorization); process.exit(1); }
  if (h["x-scope-orgid"] !== "tenant-7") { console.error("tenant", h["x-scope-orgid"]); process.exit(1); }
  console.log(series.length, "series", JSON.stringify(perReplica));
  for (const s of series) for (const smp of s.samples) console.log(smp.file);
' ok/log.jsonl >accepted.txt 2>accepted.err || fail "the store's log: $(cat accepted.err)"
head -1 accepted.txt
# The pushed bytes, as the store received them, open with go tool pprof.
opened=0
for f in $(sed -n '2,$p' accepted.txt | head -4); do
  if go tool pprof -raw "$f" >"$f.raw" 2>"$f.err" && grep -q "inuse_space/bytes" "$f.raw"; then
    opened=$((opened + 1))
  else
    fail "go tool pprof -raw $f: $(cat "$f.err")"
  fi
done
[ "$opened" -ge 4 ] || fail "only $opened pushed profiles opened with go tool pprof"
go tool pprof -top -sample_index=inuse_space "$(sed -n '$p' accepted.txt)" >last.top 2>&1 || fail "go tool pprof -top on a pushed profile"

# --- the store goes away: windows beyond the queue (2) dropped and counted, serve keeps serving
start_store gone
start_serve away app --interval 16KiB --continuous 1s --push "http://127.0.0.1:$store_port" --push-queue 2 \
  --shutdown-timeout 1s
traffic 6
for _ in $(seq 1 50); do grep -q '"status":200' gone/log.jsonl 2>/dev/null && break; sleep 0.1; done
kill "$store_pid"; wait "$store_pid" 2>/dev/null || true
sleep 5
[ "$(status_of "$base/api/users/1")" = 200 ] || fail "the worker stopped answering with the store gone"
[ "$(curl -s -o away.pb.gz -w '%{http_code}' --max-time 60 "$debug/debug/pprof/heap")" = 200 ] || fail "the debug listener stopped answering with the store gone"
wait "$traffic_pid" || true
kill -TERM "$serve_pid"
code=0; wait "$serve_pid" || code=$?
[ "$code" -eq 1 ] || fail "serve exited $code after losing windows (expected 1)"
expect_in away.err "failed"
expect_in away.err "dropping the oldest"
dropped="$(sed -n 's/.*; \([0-9]*\) dropped (queue full).*/\1/p' away.out)"
[ -n "$dropped" ] && [ "$dropped" -ge 1 ] || fail "no dropped windows counted: $(cat away.out)"
grep "pushed" away.out || true

finish
