#!/usr/bin/env bash
# A TypeScript worker bundled and minified by esbuild (tests/data/sourcemap,
# built by the "sourcemap: generate" fixture), profiled by `heapprof run`
# (which applies the map itself) and, with --no-source-maps, mapped back
# afterwards by `heapprof symbolize`: the top in-use function is
# recordRequest in metrics.ts at the line the source declares it, and the
# renamed functions get their TypeScript names back. A broken map only warns.
#   sourcemap_test.sh <heapprof> <source dir> <work dir> <generated dir>
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
generated="$(cd "$4" && pwd)"
# shellcheck source=lib.sh
source "$here/lib.sh"

bundle="$generated/esbuild/worker.min.js"
ts="$src/tests/data/sourcemap/src"
[ -f "$bundle" ] || { echo "missing $bundle (run the sourcemap fixture)" >&2; exit 1; }
line_of() { grep -nF -- "$2" "$ts/$1" | head -1 | cut -d: -f1; }
record_line="$(line_of metrics.ts 'recordRequest(route: string')"
parse_line="$(line_of routing.ts 'export function parseRoute(')"
handle_line="$(line_of worker.ts 'function handleRequest(')"

# `heapprof run` applies the bundle's map by itself.
expect_exit 0 run-mapped -- "$heapprof" run "$bundle" -n 3000 --interval 16k -o run-mapped.pb.gz
expect_in run-mapped.out "recordRequest  metrics.ts:$record_line"
if grep -q "worker.min.js:" run-mapped.out; then fail "run-mapped.out still has frames in worker.min.js"; fi

# The same engine with --replicas and --continuous: each file is mapped too.
expect_exit 0 run-replicas -- "$heapprof" run "$bundle" --replicas 2 -n 3000 --interval 16k -o rep.pb.gz
for f in rep-worker.min-0.pb.gz rep-worker.min-1.pb.gz; do
  "$heapprof" top "$f" -s inuse_space -n 3 >"$f.top" || fail "$f is not readable"
  expect_in "$f.top" "recordRequest  metrics.ts:$record_line"
done
mkdir -p rolling
expect_exit 0 run-continuous -- "$heapprof" run "$bundle" --continuous 200ms -n 3000 --interval 16k -o rolling/x.pb.gz
# The largest window (the last one may be a short remainder without samples).
last="$(ls -S rolling/*.pb.gz | head -1)"
"$heapprof" top "$last" -s alloc_space -n 50 >continuous.top
expect_in continuous.top "metrics.ts:"
if grep -q "worker.min.js:" continuous.top; then fail "a continuous window still has frames in worker.min.js"; fi

# The raw profile, positions in the bundle.
expect_exit 0 run -- "$heapprof" run "$bundle" -n 4000 --interval 16k -o bundle.pb.gz --no-source-maps
"$heapprof" top bundle.pb.gz -s inuse_space -n 3 >raw-top.out
expect_in raw-top.out "recordRequest  worker.min.js:1"

# Maps found through the bundle's sourceMappingURL comment, for scripts in the folder named.
expect_exit 0 symbolize -- "$heapprof" symbolize bundle.pb.gz --source-map-path "$(dirname "$bundle")" -o mapped.pb.gz
expect_in symbolize.err "script frames mapped"
"$heapprof" top mapped.pb.gz -s inuse_space -n 3 >top.out
got="$(top_function top.out inuse_space)"
[ "$got" = "recordRequest" ] || fail "top in-use function after symbolize is '$got', not recordRequest"
expect_in top.out "recordRequest  metrics.ts:$record_line"
"$heapprof" top mapped.pb.gz -s alloc_space -n 30 >alloc.out
expect_in alloc.out "parseRoute  routing.ts:$parse_line"
expect_in alloc.out "handleRequest  worker.ts:$handle_line"
if grep -q "worker.min.js:" alloc.out; then fail "alloc.out still has frames in worker.min.js"; fi

# A profile taken elsewhere: maps from a folder, scripts not read.
mkdir -p maps
cp "$generated/esbuild/worker.min.js.map" maps/
expect_exit 0 symbolize-dir -- "$heapprof" symbolize bundle.pb.gz --maps maps --no-scripts -o from-dir.pb.gz
"$heapprof" top from-dir.pb.gz -s inuse_space -n 3 >top-dir.out
expect_in top-dir.out "recordRequest  metrics.ts:$record_line"

# A broken map: a warning, the profile still written, frames left as they were.
mkdir -p broken
printf '{"version":3,"sources":["a.ts"],"mappings":"AA!A"}' >broken/worker.min.js.map
expect_exit 0 symbolize-broken -- "$heapprof" symbolize bundle.pb.gz --maps broken --no-scripts -o broken.pb.gz
expect_in symbolize-broken.err "warning"
expect_in symbolize-broken.err "invalid VLQ character"
"$heapprof" top broken.pb.gz -s inuse_space -n 3 >top-broken.out
expect_in top-broken.out "recordRequest  worker.min.js:1"

# The run's outcomes show a thrown error's stack through the worker's map too
# (an inline map putting all of line 1 at handler.ts:5:1).
mkdir -p throws
map='{"version":3,"sources":["handler.ts"],"names":[],"mappings":"AAIA"}'
{
  echo "export default { fetch(request) { throw new Error('thrown in handler.ts'); } };"
  echo "//# sourceMappingURL=data:application/json;base64,$(printf '%s' "$map" | base64 -w0)"
} >throws/worker.js
expect_exit 1 throws -- "$heapprof" run throws/worker.js -n 2 -o throws.pb.gz
# Stacks name scripts relative to where the worker was given, as workerd does, not by absolute path.
expect_in throws.out "at Object.fetch (throws/handler.ts:5:1)"

finish
