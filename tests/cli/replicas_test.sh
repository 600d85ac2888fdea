#!/usr/bin/env bash
# heapprof run through the controller: replicas profiled by name, continuous
# windows, and near-heap-limit capture.
#   replicas_test.sh <heapprof> <source dir> <work dir>
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

# One replica of three, by name: its profile names the metrics registry.
expect_exit 0 one -- "$heapprof" run "$examples/prometheus-leak.js" --replicas 3 --profile 'prometheus-leak-1' \
  --duration 3s --interval 64KiB -o one.pb.gz --top 3
[ -f one.pb.gz ] || fail "one.pb.gz was not written"
expect_in one.out "Profiled prometheus-leak-1 (module worker)"
expect_in one.out "Wrote one.pb.gz"
expect_in one.out "prometheus-leak-2: served"
expect_in one.out "(not profiled)"
"$heapprof" top one.pb.gz -n 1 >one.top
expect_in one.top "observe"

# An unknown replica name is a usage error, and nothing is written.
expect_exit 2 unknown -- "$heapprof" run "$examples/prometheus-leak.js" --replicas 2 --profile nobody -o unknown.pb.gz
expect_in unknown.err "no replica named nobody"
[ ! -e unknown.pb.gz ] || fail "unknown.pb.gz was written"

# Continuous windows: several valid files per replica.
mkdir -p rolling
expect_exit 0 continuous -- "$heapprof" run "$examples/prometheus-leak.js" --replicas 2 --continuous 400ms \
  --duration 3s -o rolling/x.pb.gz
count=$(ls rolling | grep -c '^prometheus-leak-[01]-[0-9]*\.pb\.gz$' || true)
[ "$count" -ge 6 ] || fail "expected >= 6 rolling profiles, got $count"
for f in rolling/*.pb.gz; do
  "$heapprof" top "$f" -n 1 >/dev/null || fail "$f is not a readable profile"
done

# Near the heap limit: the in-use profile names the hoarding function, the OOM is reported.
cat >hoard.js <<'JS'
const hoard = [];
function hoardEverything(request) {
  for (let i = 0; i < 200; ++i) hoard.push({ url: request.url, i, pad: new Array(32).fill(i) });
}
export default { fetch(request) { hoardEverything(request); return new Response('ok'); } };
JS
expect_exit 1 limit -- "$heapprof" run hoard.js --on-heap-limit near.pb.gz --heap-limit 48 --duration 30s
expect_in limit.err "exceeded its heap limit"
expect_in limit.out "Wrote the in-use profile captured near the heap limit to near.pb.gz"
"$heapprof" top near.pb.gz -n 1 >near.top
expect_in near.top "hoardEverything"

[ "$failures" -eq 0 ] && echo "replicas: all checks passed" || { echo "replicas: $failures failed"; exit 1; }
