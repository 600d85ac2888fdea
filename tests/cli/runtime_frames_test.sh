#!/usr/bin/env bash
# What the runtime builds for a request (the Request, its Headers, URL and
# strings) is allocated inside heapprof:runtime JavaScript frames, so a worker
# that keeps its requests shows the runtime's makeRequest as the caller in the
# in-use profile, not a bare (V8 API) root. Before that, (V8 API) held
# 20-24 % of this worker's in-use bytes (5 runs); now it has no row (5 runs).
#   runtime_frames_test.sh <heapprof> <source dir> <work dir>
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
source "$here/lib.sh"

printf 'const kept = [];\nexport default { fetch(request) { kept.push(request); return new Response("ok"); } };\n' >keeps.js
expect_exit 0 keeps -- "$heapprof" run keeps.js -n 5000 --interval 16KiB -o keeps.pb.gz
go tool pprof -top -sample_index=inuse_space keeps.pb.gz >keeps.top 2>/dev/null || fail "go tool pprof could not read keeps.pb.gz"

read -r api_flat _ <<<"$(pprof_shares keeps.top "(V8 API)")"
read -r _ make_cum <<<"$(pprof_shares keeps.top makeRequest)"
awk -v v="$api_flat" 'BEGIN { exit !(v < 5) }' || fail "(V8 API) holds $api_flat % of the kept requests' bytes (expected < 5 %)"
awk -v v="$make_cum" 'BEGIN { exit !(v >= 90) }' || fail "makeRequest's cum share is $make_cum % (expected >= 90 %)"

# heapprof's own top names the runtime frame and the prelude's module it is in
# (the prelude is bundled from one module per Web API, mapped through its source map).
"$heapprof" top keeps.pb.gz --cum -n 5 >own.top || fail "heapprof top could not read keeps.pb.gz"
expect_in own.top "makeRequest  heapprof:runtime/worker_prelude.js:"

# An error thrown inside the prelude: its stack in the run's outcomes names the module and line.
echo "export default { fetch(request) { new Headers({ 'bad name': 'x' }); return new Response('x'); } };" >bad.js
expect_exit 1 bad -- "$heapprof" run bad.js -n 2 -o bad.pb.gz
expect_in bad.out "(heapprof:runtime/headers.js:"

finish
