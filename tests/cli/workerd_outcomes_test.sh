#!/usr/bin/env bash
# heapprof run --runtime workerd's outcome report: a worker that throws (a
# TypeScript bundle with its map) is reported with its own exceptions, their
# kind and their stacks mapped to the .ts file (from workerd's log), not only
# "500 Internal Server Error"; "first errors" lists the requests that failed,
# not the 404 and 422 answers; and --requests N serves exactly N requests,
# run after run, whatever the sample types.
#   workerd_outcomes_test.sh <heapprof> <source dir> <work dir>
source "$(dirname "$0")/lib.sh"
export HEAPPROF_WORKERD="$src/.deps/workerd/bin/workerd"
[ -x "$HEAPPROF_WORKERD" ] || { echo "workerd is not installed (tools/bootstrap.sh)"; exit 1; }
export TMPDIR="$work/tmp"
mkdir -p "$TMPDIR"
data="$src/tests/cli/data/workerd_outcomes"
js="$src/tests/js/node_modules"

NODE_PATH="$js" "$js/.bin/esbuild" "$data/thrower.ts" --bundle --format=esm --minify --sourcemap \
  --log-level=warning --outfile=dist/thrower.js
requests="$data/requests.jsonl"

# Its exceptions: 2 of the 6 requests of the file fail, 20 of 60.
expect_exit 1 throws -- "$heapprof" run --runtime workerd dist/thrower.js --requests-file "$requests" -n 60 --warmup 6 \
  --max-failures 25% --top 0 -o throws.pb.gz
expect_in throws.out "Requests: 60; responses by status: 200 x20, 404 x10, 422 x10; failed: 20 requests (33 %) — 20 rejected"
expect_in throws.out "rejected x10 (first at request #4): TypeError: order tea: quantity must be a number"
expect_in throws.out "rejected x10 (first at request #6): RangeError: no stock left for kettle"
expect_in throws.out "thrower.ts:12:11)"
expect_in throws.out "thrower.ts:19:9)"
grep -q "Internal Server Error" throws.out throws.err && fail "the report still shows workerd's 500 text"
expect_in throws.err "20 requests threw or rejected (workerd answered 500)); first errors:"
expect_in throws.err "#4 GET https://shop.example/parse -> 500: rejected: TypeError: order tea: quantity must be a number"
expect_in throws.err "#6 GET https://shop.example/reserve -> 500: rejected: RangeError: no stock left for kettle"
grep -E -- "-> (404|422)" throws.err && fail "first errors lists answers that did not count as failures"
expect_in throws.err "above the limit of 25 % (--max-failures); first error: TypeError: order tea: quantity must be a number"
# A worker's own 500 is an answer that failed, not an exception.
cat >own500.js <<'JS'
export default { fetch() { return new Response('overloaded', { status: 503 }); } };
JS
expect_exit 0 own500 -- "$heapprof" run --runtime workerd own500.js -n 20 --warmup 2 --max-failures 100% --top 0 -o own.pb.gz
expect_in own500.out "Requests: 20; responses by status: 503 x20; failed: 20 requests (100 %) — 20 answered 5xx"
expect_in own500.err "#3 GET https://shop.example.com/"
expect_in own500.err " -> 503: overloaded"

# --requests N is exact: the windows' shares, the requests that let
# workerd's GC run before the in-use snapshot, and the rest after the windows.
route="$src/tests/remote/routes-worker.js"
run=0
for n in 23 64 101 150 257; do
  for types in both inuse alloc; do
    run=$((run + 1))
    expect_exit 0 "n$run" -- "$heapprof" run --runtime workerd "$route" --requests-file "$src/tests/remote/routes.jsonl" \
      --requests "$n" --warmup 3 --sample-types "$types" --top 0 --responses-out "n$run.jsonl" -o "n$run.pb.gz"
    served="$(sed -n 's/^Requests: \([0-9]*\);.*/\1/p' "n$run.out")"
    records="$(grep -c . "n$run.jsonl" || true)"
    echo "--requests $n --sample-types $types: served $served, $records records"
    [ "$served" = "$n" ] && [ "$records" = "$n" ] || fail "--requests $n --sample-types $types: served $served, $records records"
    last="$(tail -n 1 "n$run.jsonl" | node -e 'process.stdin.on("data", d => console.log(JSON.parse(d).index))')"
    [ "$last" = "$((n - 1))" ] || fail "--requests $n: the last record is #$last"
  done
done
pgrep -f "$TMPDIR/heapprof-workerd-" >/dev/null && fail "workerd processes left behind"

finish

# workerd binds the inspector port heapprof found free; another process can
# take it first. A workerd that loses it once (as the real one reports it) is
# started again; one that fails otherwise is not.
cat >flaky-workerd <<SH
#!/usr/bin/env bash
if [ ! -e "$work/lost-once" ]; then
  : >"$work/lost-once"
  echo "*** Fatal uncaught kj::Exception: bind(): Address already in use (os error 98)" >&2
  exit 1
fi
exec "$HEAPPROF_WORKERD" "\$@"
SH
chmod +x flaky-workerd
expect_exit 0 flaky -- "$heapprof" run --runtime workerd --workerd ./flaky-workerd own500.js -n 4 --warmup 1 \
  --max-failures 100% --top 0 -o flaky.pb.gz
[ -e "$work/lost-once" ] || fail "the flaky workerd never ran"
expect_in flaky.out "Requests: 4; responses by status: 503 x4"
cat >broken-workerd <<'SH'
#!/usr/bin/env bash
echo "broken-workerd: $(( $(cat "$0.count" 2>/dev/null || echo 0) + 1 ))" >&2
echo $(( $(cat "$0.count" 2>/dev/null || echo 0) + 1 )) >"$0.count"
exit 1
SH
chmod +x broken-workerd
expect_exit 1 broken -- "$heapprof" run --runtime workerd --workerd ./broken-workerd own500.js -n 4 --top 0 -o broken.pb.gz
[ "$(cat broken-workerd.count)" = 1 ] || fail "a workerd that failed for another reason was started $(cat broken-workerd.count) times"
expect_in broken.err "workerd exited before serving the worker"
[ -e broken.pb.gz ] && fail "a failed start wrote a profile"
echo "workerd_outcomes_test: ok"
