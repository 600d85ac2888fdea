#!/usr/bin/env bash
# heapprof run --runtime workerd honours the worker's bindings, each checked
# by a real workerd run of a worker that calls it, given as a user gives it
# (its folder: the bundle and its wrangler.toml): a KV namespace preloaded by
# --kv-data (every KV call's answer), the conformance suite's Durable Object
# apps (every response identical to workerd's when the suite's own driver
# starts workerd by hand), service bindings to another worker found beside it
# (its default export and a named entrypoint over RPC), a Durable Object
# class of another worker (script_name) and --fetch-handler as the
# globalOutbound. A binding's worker that cannot be found is an error naming
# --service, and in the embedded runtime a class of another worker is refused.
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

# KV: preloaded entries, put with metadata and a TTL, list by prefix, get
# and getWithMetadata of a list of keys, delete; keys with a space and a
# slash; the embedded runtime's answers are workerd's.
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
9 200 [["greeting",{"value":"hello","metadata":null}],["k new",{"value":"fresh value","metadata":{"by":"test"}}],["missing",{"value":null,"metadata":null}]]
10 200 {"after":null}
11 200 {"value":null}
EOF
diff kv.want kv.bodies >kv.diff || fail "kv: the answers differ from the expected ones: $(cat kv.diff)"
# The embedded runtime's KV answers the same calls alike (a list of keys: a Map).
expect_exit 0 kv-embedded -- "$heapprof" run kv --kv-data CACHE=kv/data.json --requests-file kv/req.jsonl \
  --requests "$(once kv/req.jsonl)" --warmup 0 --top 0 --responses-out kv-embedded.jsonl -o kv.pb.gz
bodies kv-embedded.jsonl >kv-embedded.bodies
diff kv.want kv-embedded.bodies >kv-embedded.diff || fail "kv embedded: the answers differ from workerd's: $(cat kv-embedded.diff)"
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
# A Durable Object namespace of another worker's class (script_name): that
# worker is found beside, as a service's is, and owns the namespace (its
# migrations make it SQLite-backed); elsewhere, --service gives it, and
# without it both runtimes refuse the binding, naming it and the script.
cp -r "$data/shop" "$data/stock" .
expect_exit 0 do-script -- "$heapprof" run --runtime workerd shop --requests-file shop/req.jsonl --requests 4 --warmup 0 \
  --top 0 --responses-out do-script.jsonl -o x.pb.gz
expect_in do-script.out "Durable Objects INVENTORY -> Inventory of stock"
expect_in do-script.out "no request failed"
bodies do-script.jsonl >do-script.bodies
cat >do-script.want <<'EOF'
0 200 {"warehouse":"east","item":"tea","reserved":1,"sql":"object"}
1 200 {"warehouse":"east","item":"tea","reserved":2,"sql":"object"}
2 200 {"warehouse":"west","item":"tea","reserved":1,"sql":"object"}
3 200 {"warehouse":"east","item":"mug","reserved":1,"sql":"object"}
EOF
diff do-script.want do-script.bodies >do-script.diff || fail "do-script: $(cat do-script.diff)"
mkdir -p stock-elsewhere && mv stock stock-elsewhere/
expect_exit 1 do-script-missing -- "$heapprof" run --runtime workerd shop -n 5 --warmup 1 -o x.pb.gz
expect_in do-script-missing.err 'durable_objects binding INVENTORY (class Inventory, script_name = "stock") names the worker "stock", and no folder in'
expect_in do-script-missing.err "give its folder with --service stock=FOLDER, or --ignore-config-key durable_objects"
expect_exit 0 do-script-given -- "$heapprof" run --runtime workerd shop --service stock=stock-elsewhere/stock \
  --requests-file shop/req.jsonl -n 8 --warmup 2 --top 0 -o x.pb.gz
expect_in do-script-given.out "Requests: 8; responses by status: 200 x8; no request failed"
# A class the owning worker does not export: workerd would serve on and fail
# every call to it; heapprof refuses before profiling, naming the class.
cp -r stock-elsewhere/stock stock-unexported
sed -i 's/^export class Inventory/class Inventory/' stock-unexported/worker.js
expect_exit 1 do-script-unexported -- "$heapprof" run --runtime workerd shop --service stock=stock-unexported -n 5 --warmup 1 -o x.pb.gz
expect_in do-script-unexported.err "workerd: no worker exports the Durable Object class Inventory that its namespace names"
expect_exit 1 do-script-embedded -- "$heapprof" run shop -n 5 --warmup 0 -o x.pb.gz
expect_in do-script-embedded.err 'durable_objects binding INVENTORY has script_name = "stock": its class Inventory lives in the worker "stock", which the embedded runtime does not run'
expect_in do-script-embedded.err "run it with --runtime workerd --service stock=FOLDER, or give --ignore-config-key durable_objects"
pgrep -f "$TMPDIR/heapprof-workerd-" >/dev/null && fail "workerd processes left behind"

finish
