#!/usr/bin/env bash
# heapprof run --runtime workerd: the real workerd (tools/bootstrap.sh puts it
# in .deps/workerd) serves tests/remote/leak-worker.js and a Hono app bundled
# by esbuild (minified TypeScript with a source map) and a worker with its own
# routes driven by a requests file; the profiles come through the DevTools
# protocol. Checked with `go tool pprof`: the leak's and
# the garbage's shares, the Hono app's own functions and .ts file, every
# response 2xx and non-empty; refused flags, a failing worker, Ctrl-C, and no
# workerd left behind.
#   workerd_test.sh <heapprof> <source dir> <work dir>
source "$(dirname "$0")/lib.sh"
# shellcheck source=../pprof_readers/go_env.sh
source "$src/tests/pprof_readers/go_env.sh"
go_env "$work"
export HEAPPROF_WORKERD="$src/.deps/workerd/bin/workerd"
[ -x "$HEAPPROF_WORKERD" ] || { echo "workerd is not installed (tools/bootstrap.sh)"; exit 1; }

share() {
  go tool pprof -top -nodefraction=0 -nodecount=1000 -sample_index="$2" "$1" 2>/dev/null |
    awk -v f="$3" '$6 == f { sub(/%/, "", $2); print $2; found = 1 } END { if (!found) print 0 }'
}
at_least() {
  awk -v v="$1" -v m="$2" 'BEGIN { exit !(v >= m) }' || fail "$3: $1 < $2"
}
# This test's workerd processes only (other tests may run workerd at the same
# time): heapprof makes its workerd config folder under $TMPDIR.
export TMPDIR="$work/tmp"
mkdir -p "$TMPDIR"
workerds() { pgrep -f "$TMPDIR/heapprof-workerd-" || true; }

# The leak, profiled in workerd.
expect_exit 0 leak -- "$heapprof" run --runtime workerd "$src/tests/remote/leak-worker.js" --window 1s \
  --interval 32KiB -o leak.pb.gz --top 3
expect_in leak.out "two back-to-back DevTools sampling windows"
expect_in leak.out "inlining off"
inuse="$(share leak.pb.gz inuse_space retainSession)"
alloc="$(share leak.pb.gz alloc_space buildReport)"
echo "workerd: retainSession ${inuse}% of inuse_space, buildReport ${alloc}% of alloc_space"
at_least "$inuse" 80 "workerd: retainSession's share of inuse_space"
at_least "$alloc" 60 "workerd: buildReport's share of alloc_space"
go tool pprof -raw leak.pb.gz >leak.raw 2>/dev/null
expect_in leak.raw "inlining: disabled"
expect_in leak.raw "v8_flags: --no-turbo-inlining"
expect_in leak.raw "responses by status: 200 x"

# A Hono app: minified TypeScript bundle with its map.
NODE_PATH="$src/tests/js/node_modules" "$src/tests/js/node_modules/.bin/esbuild" "$src/tests/remote/hono-shop.ts" \
  --bundle --format=esm --minify --sourcemap --log-level=warning --outfile=hono/shop.js
expect_exit 0 hono -- "$heapprof" run --runtime workerd hono/shop.js --window 1s --interval 16KiB -o hono.pb.gz --top 5
grep -q "failed" hono.err && fail "hono: some requests failed: $(cat hono.err)"
grep -q "empty body" hono.out && fail "hono: some responses had an empty body"
responses="$(sed -n 's/^.*responses by status: \([^;]*\).*$/\1/p' hono.out)"
echo "hono: responses $responses"
echo "$responses" | grep -qE '^(2[0-9][0-9] x[0-9]+(, )?)+$' || fail "hono: not every response is 2xx: $responses"
go tool pprof -top -nodefraction=0 -nodecount=1000 -sample_index=alloc_space hono.pb.gz >hono.top 2>/dev/null
for f in renderUserProfile searchCatalog; do expect_in hono.top " $f"; done
go tool pprof -raw hono.pb.gz >hono.raw 2>/dev/null
expect_in hono.raw "hono-shop.ts"

# A worker with routes of its own (anything else is 404) driven by a requests
# file, as in the embedded runtime: every response 2xx, the routes' functions
# in the profile, --requests sharing the windows, and --responses-out the
# same status and body for each request as the embedded runtime's records
# (workerd's content-length header aside); request.url is the file's URL.
routes="$src/tests/remote/routes-worker.js"
expect_exit 0 routes -- "$heapprof" run --runtime workerd "$routes" --requests-file "$src/tests/remote/routes.jsonl" \
  --requests 400 --warmup 20 --interval 16KiB --responses-out routes-w.jsonl -o routes.pb.gz --top 0
expect_in routes.err "allocation window open for 185 requests"
responses="$(sed -n 's/^.*responses by status: \([^;]*\).*$/\1/p' routes.out)"
echo "routes: responses $responses"
echo "$responses" | grep -qE '^(2[0-9][0-9] x[0-9]+(, )?)+$' || fail "routes: not every response is 2xx: $responses"
go tool pprof -top -nodefraction=0 -nodecount=1000 -sample_index=alloc_space routes.pb.gz >routes.top 2>/dev/null
for f in renderInvoice tokenizeQuery acceptOrder; do expect_in routes.top " $f"; done
expect_exit 0 routes-embedded -- "$heapprof" run "$routes" --requests-file "$src/tests/remote/routes.jsonl" \
  --requests 400 --warmup 20 --responses-out routes-e.jsonl -o routes-e.pb.gz --top 0
node - routes-e.jsonl routes-w.jsonl <<'JS' || fail "routes: workerd's responses differ from the embedded runtime's"
const fs = require('node:fs');
const read = f => fs.readFileSync(f, 'utf8').split('\n').filter(Boolean).map(l => JSON.parse(l));
const [embedded, workerd] = [read(process.argv[2]), read(process.argv[3])];
if (embedded.length !== 400 || workerd.length !== 400) throw new Error(`records: ${embedded.length}, ${workerd.length}`);
const keys = ['index', 'method', 'url', 'status', 'body', 'body_base64', 'error'];
const search = workerd.find(r => r.url.includes('/search'));
if (!search.headers.some(([n, v]) => n === 'x-url' && v === search.url)) throw new Error('request.url is not the file\'s URL');
embedded.forEach((e, i) => {
  for (const k of keys) {
    if (JSON.stringify(e[k]) !== JSON.stringify(workerd[i][k])) throw new Error(`record ${i}: ${k} differs`);
  }
});
console.log(`routes: ${embedded.length} records identical in status and body`);
JS

# One request in four outlives --request-timeout: counted as timed out and
# recorded as an error; 5 of 25 failed passes the default --max-failures
# (50 %) and fails --max-failures 10 %.
{ cat "$src/tests/remote/routes.jsonl"; echo '{"url": "https://shop.example/slow"}'; } >slow.jsonl
expect_exit 0 timeout -- "$heapprof" run --runtime workerd "$routes" --requests-file slow.jsonl --requests 25 --warmup 5 \
  --request-timeout 300ms --responses-out timeout.jsonl -o timeout.pb.gz --top 0
expect_in timeout.out "requests timed out"
expect_in timeout.out "timed out x"
expect_in timeout.jsonl '"error":"no response within --request-timeout 300 ms","index":4,"method":"GET","url":"https://shop.example/slow"}'
# HEAD requests: the answer has no body, whatever its Content-Length says (a
# client waiting for one times out).
{ echo '{"method": "HEAD", "url": "https://shop.example/invoices/17"}'; echo '{"url": "https://shop.example/invoices/4"}'; } >head.jsonl
expect_exit 0 head -- "$heapprof" run --runtime workerd "$routes" --requests-file head.jsonl --requests 20 --warmup 2 \
  --request-timeout 2s -o head.pb.gz --top 0
if grep -q "timed out" head.out head.err; then fail "head: HEAD requests timed out: $(grep -h "timed out" head.out head.err)"; fi
expect_exit 1 max-failures -- "$heapprof" run --runtime workerd "$routes" --requests-file slow.jsonl --requests 25 \
  --warmup 5 --request-timeout 300ms --max-failures 10% -o max-failures.pb.gz --top 0
expect_in max-failures.err "above the limit of 10 % (--max-failures)"
[ -s max-failures.pb.gz ] || fail "max-failures: the profile is not written"
# --url builds the one request, as in the embedded runtime; its flags are checked the same way.
expect_exit 0 url -- "$heapprof" run --runtime workerd "$routes" --url https://shop.example/orders --method POST \
  --header "content-type: application/json" --body '{"items": [7]}' --requests 30 --warmup 2 -o url.pb.gz --top 0
expect_in url.out "responses by status: 201 x"
expect_exit 2 url-and-file -- "$heapprof" run --runtime workerd "$routes" --url https://a.example/ \
  --requests-file slow.jsonl
expect_in url-and-file.err "--url and --requests-file are alternatives"
expect_exit 2 requests-time-warmup -- "$heapprof" run --runtime workerd "$routes" --requests 100 --warmup 1s
expect_in requests-time-warmup.err "give --warmup as a number of requests"

# Flags only the embedded host can honour are refused before anything starts.
expect_exit 2 replicas -- "$heapprof" run --runtime workerd "$src/tests/remote/leak-worker.js" --replicas 2
expect_in replicas.err "--replicas does not work with --runtime workerd"
expect_exit 2 from-start -- "$heapprof" run --runtime workerd "$src/tests/remote/leak-worker.js" --from-start
expect_in from-start.err "--from-start does not work with --runtime workerd"

# A worker file whose name has a quote, a backslash and a newline: the config
# heapprof writes for workerd still parses, and the profile names the module.
odd="$(printf 'odd "na\\me\nleak.js')"
cp "$src/tests/remote/leak-worker.js" "$odd"
expect_exit 0 odd-name -- "$heapprof" run --runtime workerd "$odd" --window 1s -o odd.pb.gz --top 1
expect_in odd-name.out "buildReport"
expect_in odd-name.out 'odd "na\me\x0aleak.js:19'

# A worker that throws on every request: said so, and a failure.
cat >throws.js <<'JS'
export default { async fetch() { throw new Error("database unreachable"); } };
JS
expect_exit 1 throws -- "$heapprof" run --runtime workerd throws.js --window 300ms -o throws.pb.gz
expect_in throws.err "requests failed"
expect_in throws.err "-> 500: rejected: Error: database unreachable"

# A signal in the window (SIGTERM: a background job of a script ignores
# SIGINT): the profile so far, exit 143, workerd gone.
"$heapprof" run --runtime workerd "$src/tests/remote/leak-worker.js" --window 30s -o sigint.pb.gz >sigint.out 2>sigint.err &
run=$!
for _ in $(seq 1 200); do grep -q "window" sigint.out sigint.err 2>/dev/null && [ -n "$(workerds)" ] && break; sleep 0.1; done
sleep 0.5
kill -TERM "$run"
got=0
wait "$run" || got=$?
[ "$got" = 143 ] || fail "sigterm: exit code $got, expected 143 ($(cat sigint.err))"
[ -s sigint.pb.gz ] || fail "sigterm: no profile written"

sleep 0.2
[ -z "$(workerds)" ] || fail "workerd processes left behind: $(workerds)"
finish
