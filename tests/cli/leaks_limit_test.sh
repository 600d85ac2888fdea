#!/usr/bin/env bash
# The near-limit story end to end at 128 MiB: `heapprof serve --leaks
# --heap-limit 128` runs leak-to-limit.js (~10 KiB kept a request) as fast as
# it answers; at 40 % of the limit the leak endpoint's projection is read
# (tools/bench/leaks_limit.mjs), then the requests go on until one fails at
# the limit. A leak per request reaches the limit after the same number of
# requests whatever the pace, so the projection in requests must hold it:
# within 5 standard deviations of its interval (its 95 % interval is printed
# too). Measured at 400 requests/s over 6 runs (docs/statistics.md): inside
# the 95 % interval in all 6, the limit 1.3-1.7 standard deviations later than
# projected; unpaced in this test, 3 runs held it too. The time
# projection depends on the pace, which a test does not control: the
# benchmark (tools/bench/run.sh --near-limit-runs) counts its coverage.
#   leaks_limit_test.sh <heapprof> <source dir> <work dir>
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
source "$here/lib.sh"

expect_exit 0 limit -- node "$src/tools/bench/leaks_limit.mjs" --heapprof "$heapprof" --runs 1 --rate 100000 \
  --json limit.json
cat limit.out
node -e '
  const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).results[0];
  const mib = 1 << 20;
  if (!/128.00 MiB heap limit/.test(r.text)) { console.log("the projection is not against the 128 MiB limit"); process.exit(1); }
  if (r.requests_to_limit == null || r.requests_high == null) { console.log("no projection in requests"); process.exit(1); }
  const sd = (r.requests_high - r.requests_low) / (2 * 1.96);
  const off = Math.abs(r.requests_to_limit - r.requests_left) / sd;
  console.log(`projected ${r.requests_to_limit.toFixed(0)} more requests after ${r.read_at_requests}, reached after ${r.requests_left} more: ` +
    `off by ${off.toFixed(2)} sd; the 95 % interval ${r.holds_requests ? "holds" : "misses"} it`);
  process.exit(off <= 5 && r.failed_status >= 500 ? 0 : 1);' limit.json ||
  fail "the projection in requests does not hold the moment the heap reached its 128 MiB limit"
finish
