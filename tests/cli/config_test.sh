#!/usr/bin/env bash
# The worker's configuration in both runtimes: a folder given as the worker
# (wrangler.toml's main), vars, .dev.vars secrets, JSON vars and compatibility
# flags as the worker sees them; every key a runtime does not honour named in
# one warning line; a binding the code would call refused unless
# --ignore-config-key; files named and missing are errors in both runtimes.
#   config_test.sh <heapprof> <source dir> <work dir>
source "$(dirname "$0")/lib.sh"
export HEAPPROF_WORKERD="$src/.deps/workerd/bin/workerd"
[ -x "$HEAPPROF_WORKERD" ] || { echo "workerd is not installed (tools/bootstrap.sh)"; exit 1; }
export TMPDIR="$work/tmp"
mkdir -p "$TMPDIR"

# The app: its env as JSON, so the responses show what each runtime bound.
mkdir -p app/dist
cat >app/dist/worker.js <<'JS'
export default {
  fetch(request, env) {
    return Response.json({ mode: env.MODE, retries: env.RETRIES, limits: env.LIMITS, token: env.TOKEN,
                           kinds: [typeof env.MODE, typeof env.RETRIES, typeof env.LIMITS, typeof env.TOKEN] });
  },
};
JS
cat >app/wrangler.toml <<'TOML'
name = "config-app"
main = "dist/worker.js"
compatibility_date = "2025-01-01"
compatibility_flags = ["streams_enable_constructors"]
account_id = "0123"
workers_dev = true
routes = ["example.com/*"]
upload_source_maps = true
mystery_key = 1

[vars]
MODE = "prod"
RETRIES = 3
LIMITS = { burst = 10 }

[triggers]
crons = ["*/5 * * * *"]

[define]
VERSION = "\"1\""

[observability]
enabled = true
TOML
printf 'TOKEN="s3cr3t"\n' >app/.dev.vars
printf '{"url": "https://app.example/"}\n' >get.jsonl
want='{"mode":"prod","retries":3,"limits":{"burst":10},"token":"s3cr3t","kinds":["string","number","object","string"]}'

# One warning line each, naming every key the runtime leaves out.
check_warning() {  # <name> <key...>
  local name="$1"
  shift
  [ "$(grep -c 'warning: .*not honoured by' "$name.err")" = 1 ] || fail "$name: not one warning line"
  for key in "$@"; do expect_in "$name.err" "$key"; done
}
body_of() { node -e 'const l = require("fs").readFileSync(process.argv[1], "utf8").trim().split("\n"); process.stdout.write(JSON.parse(l[l.length - 1]).body)' "$1"; }

expect_exit 0 embedded -- "$heapprof" run app --requests-file get.jsonl -n 20 --warmup 0 --top 0 --responses-out embedded.jsonl
check_warning embedded "app/wrangler.toml: not honoured by the embedded runtime: " "account_id (deploy only)" \
  "compatibility_date (recorded" "compatibility flag streams_enable_constructors" "define (build-time" \
  "mystery_key (unknown to heapprof)" "observability (deploy only)" "routes (deploy only)" "triggers (scheduled" \
  "upload_source_maps" "workers_dev"
expect_in embedded.out "Bindings from app/wrangler.toml, app/.dev.vars: vars LIMITS, MODE, RETRIES; secrets TOKEN"
[ "$(body_of embedded.jsonl)" = "$want" ] || fail "embedded env: $(body_of embedded.jsonl)"
[ -f config-app.pb.gz ] || fail "a folder's profile is named after its config's name"

# The wrangler.toml itself given as the worker (not run as a script): its
# folder's worker with that config, in both runtimes; with --config too it is refused.
rm -f config-app.pb.gz
expect_exit 0 toml -- "$heapprof" run app/wrangler.toml --requests-file get.jsonl -n 20 --warmup 0 --top 0 \
  --responses-out toml.jsonl
expect_in toml.out "Bindings from app/wrangler.toml, app/.dev.vars"
[ "$(body_of toml.jsonl)" = "$want" ] || fail "the toml as the worker: $(body_of toml.jsonl)"
[ -f config-app.pb.gz ] || fail "a wrangler.toml's profile is named after its config's name"
expect_exit 0 toml-workerd -- "$heapprof" run app/wrangler.toml --runtime workerd --requests-file get.jsonl -n 24 \
  --warmup 4 --top 0 --responses-out toml-workerd.jsonl -o toml-workerd.pb.gz
[ "$(body_of toml-workerd.jsonl)" = "$want" ] || fail "the toml as the worker in workerd: $(body_of toml-workerd.jsonl)"
expect_exit 1 toml-config -- "$heapprof" run app/wrangler.toml --config app/wrangler.toml -n 5 --top 0
expect_in toml-config.err "is a wrangler config, and --config gives"

expect_exit 0 workerd -- "$heapprof" run app --runtime workerd --requests-file get.jsonl -n 24 --warmup 4 --top 0 \
  --responses-out workerd.jsonl -o workerd.pb.gz
check_warning workerd "app/wrangler.toml: not honoured by heapprof's workerd mode: " "account_id (deploy only)" \
  "define (build-time" "mystery_key (unknown to heapprof)" "observability" "routes" "triggers (scheduled" \
  "upload_source_maps" "workers_dev"
grep -q "compatibility" workerd.err && fail "workerd honours compatibility_date and flags: $(cat workerd.err)"
[ "$(body_of workerd.jsonl)" = "$want" ] || fail "workerd env: $(body_of workerd.jsonl)"

# A binding the code would call: refused by a runtime that cannot give it, unless ignored.
cp -r app app-do
cat >>app-do/wrangler.toml <<'TOML'

[[durable_objects.bindings]]
name = "COUNTER"
class_name = "Counter"

[[r2_buckets]]
binding = "FILES"
bucket_name = "files"
TOML
expect_exit 1 do-embedded -- "$heapprof" run app-do -n 5 --warmup 0 --top 0 -o x.pb.gz
expect_in do-embedded.err "the embedded runtime cannot honour r2_buckets (R2 buckets), which the worker's code would call: run it with --runtime workerd, or give --ignore-config-key KEY"
expect_exit 0 do-ignored -- "$heapprof" run app-do -n 5 --warmup 0 --top 0 -o x.pb.gz \
  --ignore-config-key durable_objects --ignore-config-key r2_buckets
check_warning do-ignored "durable_objects (Durable Object namespaces; --ignore-config-key)" "r2_buckets (R2 buckets; --ignore-config-key)"
# Durable Objects are honoured: the class must then be the worker's.
expect_exit 1 do-no-class -- "$heapprof" run app-do -n 5 --warmup 0 --top 0 -o x.pb.gz --ignore-config-key r2_buckets
expect_in do-no-class.err "env.COUNTER: the worker exports no class Counter"
# A worker with its class: every request reaches the object; the report lists
# it with its requests; two replicas would split one object in two: refused.
mkdir do-app
cat >do-app/wrangler.toml <<'TOML'
name = "do-app"
main = "worker.js"

[[durable_objects.bindings]]
name = "COUNTER"
class_name = "Counter"
TOML
cat >do-app/worker.js <<'JS'
import { DurableObject } from 'cloudflare:workers';
export class Counter extends DurableObject {
  async bump() { const n = ((await this.ctx.storage.get('n')) ?? 0) + 1; await this.ctx.storage.put('n', n); return n; }
}
export default { async fetch(request, env) { return new Response(String(await env.COUNTER.getByName('hits').bump())); } };
JS
expect_exit 0 do-run -- "$heapprof" run do-app -n 7 --warmup 0 --top 0 -o x.pb.gz --responses-out do-run.jsonl
expect_in do-run.out "COUNTER:hits  heap "
expect_in do-run.out "  7 requests"
expect_in do-run.out "no request failed"
[ "$(tail -n 1 do-run.jsonl | node -e 'process.stdin.on("data", d => console.log(JSON.parse(d).body))')" = 7 ] ||
  fail "the seventh request did not see six earlier increments: $(tail -n 1 do-run.jsonl)"
expect_exit 2 do-replicas -- "$heapprof" run do-app -n 7 --warmup 0 --replicas 2 -o x.pb.gz
expect_in do-replicas.err "--replicas with Durable Objects"
expect_exit 0 do-profile-one -- "$heapprof" run do-app -n 7 --warmup 0 --top 0 --profile COUNTER:hits -o one.pb.gz
expect_in do-profile-one.err "the window on Durable Object COUNTER:hits opened at its creation"
expect_exit 1 ignore-nothing -- "$heapprof" run app -n 5 --warmup 0 --ignore-config-key d1_databases -o x.pb.gz
expect_in ignore-nothing.err "--ignore-config-key d1_databases: app/wrangler.toml has no such key"

# R2 buckets and D1 databases: neither runtime backs them (workerd's R2 and
# D1 bindings need a storage service of their own); each refuses them, naming
# the keys, and runs without them when --ignore-config-key says so.
mkdir -p storage
cat >storage/worker.js <<'JS'
export default { fetch(request, env) { return Response.json({ files: typeof env.FILES, db: typeof env.DB, mode: env.MODE }); } };
JS
cat >storage/wrangler.toml <<'TOML'
name = "storage"
main = "worker.js"

[vars]
MODE = "prod"

[[r2_buckets]]
binding = "FILES"
bucket_name = "files"

[[d1_databases]]
binding = "DB"
database_name = "shop"
database_id = "0000"
TOML
for runtime in embedded workerd; do
  expect_exit 1 "storage-$runtime" -- "$heapprof" run storage --runtime "$runtime" -n 24 --warmup 4 -o x.pb.gz
  expect_in "storage-$runtime.err" "cannot honour d1_databases (D1 databases), r2_buckets (R2 buckets), which the worker's code would call"
  expect_in "storage-$runtime.err" "--ignore-config-key KEY to run without it"
  expect_exit 0 "storage-ignored-$runtime" -- "$heapprof" run storage --runtime "$runtime" -n 24 --warmup 4 --top 0 \
    --ignore-config-key r2_buckets --ignore-config-key d1_databases --responses-out "storage-$runtime.jsonl" -o x.pb.gz
  check_warning "storage-ignored-$runtime" "r2_buckets (R2 buckets; --ignore-config-key)" "d1_databases (D1 databases; --ignore-config-key)"
  [ "$(body_of "storage-$runtime.jsonl")" = '{"files":"undefined","db":"undefined","mode":"prod"}' ] ||
    fail "storage-ignored-$runtime: $(body_of "storage-$runtime.jsonl")"
done

# nodejs_compat changes which code runs: both runtimes honour it, from the flag as from the config;
# a flag of that kind the embedded runtime lacks (experimental) is refused there.
cat >node.js <<'JS'
import { Buffer } from 'node:buffer';
export default { fetch() { return new Response(Buffer.from('aGk=', 'base64').toString()); } };
JS
expect_exit 0 node-embedded -- "$heapprof" run node.js --compatibility-flag nodejs_compat -n 5 --warmup 0 --top 0 \
  --responses-out node-embedded.jsonl -o x.pb.gz
[ "$(body_of node-embedded.jsonl)" = "hi" ] || fail "nodejs_compat embedded: $(cat node-embedded.err)"
expect_exit 1 experimental-embedded -- "$heapprof" run node.js --compatibility-flag nodejs_compat \
  --compatibility-flag experimental -n 5 --warmup 0 -o x.pb.gz
expect_in experimental-embedded.err "the flags: the embedded runtime cannot honour compatibility flag experimental"
expect_exit 0 node-workerd -- "$heapprof" run node.js --runtime workerd --compatibility-flag nodejs_compat \
  --compatibility-date 2025-01-01 -n 24 --warmup 4 --top 0 --responses-out node.jsonl -o node.pb.gz
[ "$(body_of node.jsonl)" = "hi" ] || fail "nodejs_compat in workerd: $(cat node-workerd.err)"
expect_in node-workerd.out "compatibility_flags nodejs_compat"
# Without the flag workerd itself refuses the import: the flag really reached it.
expect_exit 1 node-workerd-off -- "$heapprof" run node.js --runtime workerd -n 24 --warmup 4 --top 0 -o x.pb.gz
expect_in node-workerd-off.err "node:buffer"

# Files named and missing: an error in both runtimes, before anything runs.
for runtime in embedded workerd; do
  expect_exit 1 "missing-config-$runtime" -- "$heapprof" run app/dist/worker.js --runtime "$runtime" --config nope.toml
  expect_in "missing-config-$runtime.err" "--config: no such file: nope.toml"
  expect_exit 1 "missing-env-$runtime" -- "$heapprof" run app --runtime "$runtime" --env-json nope.json
  expect_in "missing-env-$runtime.err" "--env-json: "
  expect_in "missing-env-$runtime.err" "nope.json"
  expect_exit 1 "missing-kv-$runtime" -- "$heapprof" run app --runtime "$runtime" --kv-data CACHE=nope.json
  expect_in "missing-kv-$runtime.err" "--kv-data CACHE=nope.json: "
done
pgrep -f "$TMPDIR/heapprof-workerd-" >/dev/null && fail "workerd processes left behind"

finish
