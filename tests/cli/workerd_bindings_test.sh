#!/usr/bin/env bash
# heapprof run --runtime workerd honours the worker's bindings, each checked
# by a real workerd run of a worker that calls it, given as a user gives it
# (its folder: the bundle and its wrangler.toml): a KV namespace preloaded by
# --kv-data (every KV call's answer), the conformance suite's Durable Object
# apps (every response identical to workerd's when the suite's own driver
# starts workerd by hand), service bindings to another worker found beside it
# (its default export and a named entrypoint over RPC) and --fetch-handler as
# the globalOutbound. A binding's worker that cannot be found is an error
# naming --service.
#   workerd_bindings_test.sh <heapprof> <source dir> <work dir>
source "$(dirname "$0")/lib.sh"
export HEAPPROF_WORKERD="$src/.deps/workerd/bin/workerd"
[ -x "$HEAPPROF_WORKERD" ] || { echo "workerd is not installed (tools/bootstrap.sh)"; exit 1; }
export TMPDIR="$work/tmp"
mkdir -p "$TMPDIR"
data="$src/tests/cli/data/workerd_bindings"
js="$src/tests/js/node_modules"

# "index status body" per record of a --responses-out file.
bodies() {
  node -e 'for (const l of require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n")) {
    const r = JSON.parse(l); console.log(`${r.index} ${r.status ?? "error"} ${r.body ?? r.error}`); }' "$1"
}
# Every request of the file exactly once (--requests N, no warm-up).
once() { grep -c . "$1"; }

# KV: preloaded entries, put with metadata and a TTL, list by prefix, bulk
# get, delete; keys with a space and a slash.
cp -r "$data/kv" kv
expect_exit 0 kv -- "$heapprof" run --runtime workerd kv --kv-data CACHE=kv/data.json --requests-file kv/req.jsonl \
  --requests "$(once kv/req.jsonl)" --warmup 0 --top 0 --responses-out kv.jsonl -o kv.pb.gz
expect_in kv.out "KV CACHE (3 keys preloaded)"
expect_in kv.out "no request failed"
grep -q "not honoured" kv.err && fail "kv: kv_namespaces named as not honoured: $(cat kv.err)"
bodies kv.jsonl >kv.bodies
cat >kv.want <<'EOF'
0 200 {"value":"hello"}
1 200 {"a":1}
2 200 {"value":"ann"}
3 200 "stored"
4 200 {"value":"fresh value"}
5 200 {"value":"fresh value","metadata":{"by":"test"}}
6 200 ["config","greeting","k new","user/1"]
7 200 ["user/1"]
8 200 [["greeting","hello"],["missing",null]]
9 200 {"after":null}
10 200 {"value":null}
EOF
diff kv.want kv.bodies >kv.diff || fail "kv: the answers differ from the expected ones: $(cat kv.diff)"
# Without --kv-data the namespace is there, empty.
expect_exit 0 kv-empty -- "$heapprof" run --runtime workerd kv --url https://kv.example/get/greeting -n 6 --warmup 1 \
  --top 0 --responses-out kv-empty.jsonl -o kv.pb.gz
[ "$(bodies kv-empty.jsonl | cut -d' ' -f2- | sort -u)" = '200 {"value":null}' ] || fail "kv-empty: $(bodies kv-empty.jsonl)"

# Durable Objects: the conformance apps (namespaces, migrations' classes,
# storage, RPC, alarms' absence...), bundled as the suite bundles them, each
# request once; workerd_responses.mjs serves the same bundles by hand.
driver=()
for app in durable-objects durable-objects-classic; do
  mkdir -p "$app"
  cp "$src/tests/conformance/apps/$app/wrangler.toml" "$app/"
  NODE_PATH="$js" "$js/.bin/esbuild" "$src/tests/conformance/apps/$app/worker.js" --bundle --format=esm \
    --conditions=worker,browser --sourcemap --log-level=warning --external:'cloudflare:*' --external:'node:*' \
    --outfile="$app/worker.js"
  requests="$src/tests/conformance/apps/$app/requests.jsonl"
  expect_exit 0 "$app" -- "$heapprof" run --runtime workerd "$app" --requests-file "$requests" \
    --requests "$(once "$requests")" --warmup 0 --max-failures 10% --top 0 --responses-out "$app.jsonl" -o "$app.pb.gz"
  expect_in "$app.out" "Durable Objects "
  [ "$(grep -c . "$app.jsonl")" = "$(once "$requests")" ] || fail "$app: not one record per request"
  driver+=("$app=$app/worker.js,$requests,$app-by-hand.jsonl")
done
expect_in durable-objects.out "Requests: 39; responses by status: 200 x37, 404 x1, 418 x1; no request failed"
# The classic chat app's one 5xx is its own answer (a room that throws, caught and answered 502).
expect_in durable-objects-classic.out "failed: 1 request (5.9 %) — 1 answered 5xx"
expect_in durable-objects-classic.err '#11 GET https://chat.example.com/room/lobby/throw -> 502: {"caught":"Error","message":"the room failed"}'
node "$src/tests/conformance/workerd_responses.mjs" --workerd "$HEAPPROF_WORKERD" --dir by-hand "${driver[@]}" \
  >by-hand.out 2>&1 || fail "workerd_responses.mjs failed: $(cat by-hand.out)"
expect_exit 0 compare -- node "$src/tests/conformance/compare.mjs" durable-objects=durable-objects.jsonl,durable-objects-by-hand.jsonl \
  durable-objects-classic=durable-objects-classic.jsonl,durable-objects-classic-by-hand.jsonl
expect_in compare.out "total                          56         56          0"

# Service bindings: api calls auth (found beside it by its name) through its
# default export and its Admin entrypoint, and fetches an upstream that
# --fetch-handler answers.
cp -r "$data/api" "$data/auth" .
expect_exit 0 services -- "$heapprof" run --runtime workerd api --fetch-handler api/handler.js --requests-file api/req.jsonl \
  -n 30 --warmup 2 --top 0 --responses-out services.jsonl -o services.pb.gz
expect_in services.out "Requests: 30; responses by status: 200 x30; no request failed"
expect_in services.out "services AUTH -> auth, ADMIN -> auth"
bodies services.jsonl | head -n 2 >services.bodies
cat >services.want <<'EOF'
0 200 {"verified":{"user":"ann","by":"auth-service","ok":true},"role":"owner","price":{"host":"upstream.example","item":"tea","cents":450}}
1 200 {"verified":{"user":"bob","by":"auth-service","ok":false},"role":"member","price":{"host":"upstream.example","item":"tea","cents":450}}
EOF
diff services.want services.bodies >services.diff || fail "services: $(cat services.diff)"
# The auth worker elsewhere: found with --service, an error without it.
mkdir -p elsewhere && mv auth elsewhere/
expect_exit 1 no-service -- "$heapprof" run --runtime workerd api --fetch-handler api/handler.js -n 5 --warmup 1 -o x.pb.gz
expect_in no-service.err "services binding AUTH names the worker \"auth\", and no folder in"
expect_in no-service.err "give its folder with --service auth=FOLDER"
expect_exit 0 given-service -- "$heapprof" run --runtime workerd api --service auth=elsewhere/auth \
  --fetch-handler api/handler.js --requests-file api/req.jsonl -n 10 --warmup 2 --top 0 -o x.pb.gz
expect_in given-service.out "Requests: 10; responses by status: 200 x10; no request failed"
expect_exit 2 service-embedded -- "$heapprof" run api --service auth=elsewhere/auth -n 5 -o x.pb.gz
expect_in service-embedded.err "--service is for --runtime workerd"
expect_exit 0 services-ignored -- "$heapprof" run --runtime workerd api --ignore-config-key services --url https://api.example/ \
  -n 5 --warmup 1 --max-failures 100% --top 0 -o x.pb.gz
expect_in services-ignored.err "services (service bindings to other workers; --ignore-config-key)"
pgrep -f "$TMPDIR/heapprof-workerd-" >/dev/null && fail "workerd processes left behind"

finish
