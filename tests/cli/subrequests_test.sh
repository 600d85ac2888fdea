#!/usr/bin/env bash
# fetch() subrequests answered by the user's --fetch-handler module, the same
# in every mode of run and in serve; without it fetch() refuses with a clear
# message, and bad handler modules are clear errors.
#   subrequests_test.sh <heapprof> <source dir> <work dir>
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
source "$here/lib.sh"
# shellcheck source=serve_lib.sh
source "$here/serve_lib.sh"
worker="$src/examples/subrequests/worker.js"
api="$src/examples/subrequests/api.js"

# The worker answers 200 only when its subrequest got the API's 200 (a POST
# with the right authorization header and a JSON body): every request counts.
expect_exit 0 run -- "$heapprof" run "$worker" --fetch-handler "$api" -n 300 -o run.pb.gz
expect_in run.out "Requests: 300; responses by status: 200 x300; no request failed"
expect_in run.out "answered by $api (--fetch-handler)"
expect_exit 0 replicas -- "$heapprof" run "$worker" --fetch-handler "$api" --replicas 2 -n 200 -o replicas.pb.gz
expect_in replicas.out "Requests: 400; responses by status: 200 x400; no request failed"
mkdir -p cont
expect_exit 0 continuous -- "$heapprof" run "$worker" --fetch-handler "$api" --continuous 100ms -n 2000 -o cont/x.pb.gz --top 1
expect_in continuous.out "Requests: 2000; responses by status: 200 x2000; no request failed"
expect_exit 0 url -- "$heapprof" run "$worker" --fetch-handler "$api" --url 'https://shop.example.com/?sku=SKU-9' -n 20 \
  --max-failures 100% -o url.pb.gz
expect_in url.out "Error: the pricing API answered 404: {\"error\":\"no such sku: SKU-9\"}"

# Without the flag: no network, every request fails with the hint.
expect_exit 1 none -- "$heapprof" run "$worker" -n 50 -o none.pb.gz
expect_in none.err "heapprof's runtime has no network; the worker's subrequests are refused (answer them with --fetch-handler FILE)"

# Bad handlers: clear errors, no crash.
expect_exit 1 missing -- "$heapprof" run "$worker" --fetch-handler missing.js -n 5 -o missing.pb.gz
expect_in missing.err "--fetch-handler: no such file: missing.js"
printf 'export const notAHandler = 1;\n' >no-default.js
expect_exit 1 no-default -- "$heapprof" run "$worker" --fetch-handler no-default.js -n 5 -o no-default.pb.gz
expect_in no-default.err "no-default.js has no default export: it must \`export default { async fetch(request)"
printf 'export default { fetch() { return "not a response"; } };\n' >wrong.js
expect_exit 1 wrong -- "$heapprof" run "$worker" --fetch-handler wrong.js -n 5 -o wrong.pb.gz
expect_in wrong.out "wrong.js answered string instead of a Response"
# workerd: the handler is a worker of its own, the worker's globalOutbound.
expect_exit 0 workerd -- "$heapprof" run "$worker" --fetch-handler "$api" --runtime workerd -n 120 --warmup 10 -o workerd.pb.gz
expect_in workerd.out "Requests: 120; responses by status: 200 x120; no request failed"
expect_in workerd.out "subrequests answered by $api (--fetch-handler: every worker's globalOutbound)"
expect_exit 1 workerd-missing -- "$heapprof" run "$worker" --fetch-handler missing.js --runtime workerd -n 5 -o x.pb.gz
expect_in workerd-missing.err "--fetch-handler: no such file: missing.js"

# serve: the same flag, the API's answer in the worker's HTTP response.
start_serve serve "$worker" --fetch-handler "$api"
body="$(curl -s --max-time 60 "$base/cart?sku=SKU-3")"
[ "$body" = '{"sku":"SKU-3","price":"189.00 EUR"}' ] || fail "serve: unexpected body $body"
[ "$(status_of "$base/cart?sku=SKU-0")" = 500 ] || fail "serve: an unknown sku should be a 500"
stop_serve
expect_exit 1 serve-missing -- "$heapprof" serve "$worker" --fetch-handler missing.js --listen 127.0.0.1:0
expect_in serve-missing.err "--fetch-handler: no such file: missing.js"

finish
