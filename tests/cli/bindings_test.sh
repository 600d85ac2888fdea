#!/usr/bin/env bash
# heapprof run with the user's traffic and bindings: the kv-session example
# (wrangler.toml vars and a KV namespace, preloaded KV data, a requests file),
# its outcome report, and bad binding files refused before the run.
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
source "$here/lib.sh"
ex="$src/examples/kv-session"

expect_exit 0 kv -- "$heapprof" run "$ex/worker.js" --requests-file "$ex/requests.jsonl" \
  --kv-data "USERS=$ex/users.json" -n 400 --warmup 0 --interval 16KiB -o kv.pb.gz
expect_in kv.out "Bindings from $ex/wrangler.toml, $ex/users.json: vars API_VERSION, SESSION_TTL_SECONDS; KV USERS (3 keys preloaded)"
# Three of the four replayed logins find their user in KV: 200; the fourth: 404 (not a failure).
expect_in kv.out "Requests: 400; responses by status: 200 x300, 404 x100; no request failed"

# Without the KV data every login is a 404: the bindings are really what the worker reads.
expect_exit 0 kv-empty -- "$heapprof" run "$ex/worker.js" --requests-file "$ex/requests.jsonl" -n 40 --warmup 0 \
  --top 0 -o kv-empty.pb.gz
expect_in kv-empty.out "responses by status: 404 x40"

# --env-json adds vars; --config names the configuration explicitly.
printf '{"EXTRA": {"on": true}}' >env.json
printf '{ // comment\n "vars": { "FROM_JSONC": "yes" } }\n' >wrangler.jsonc
printf 'export default { fetch(r, env) { return Response.json(env, { status: env.EXTRA.on && env.FROM_JSONC === "yes" ? 200 : 500 }); } };\n' >env.js
expect_exit 0 env -- "$heapprof" run env.js --config wrangler.jsonc --env-json env.json -n 20 --warmup 0 --top 0 -o env.pb.gz
expect_in env.out "responses by status: 200 x20"

# Bad binding files: an error naming the file, exit 1, nothing written.
printf '[vars\n' >broken.toml
expect_exit 1 bad-toml -- "$heapprof" run env.js --config broken.toml -o bad.pb.gz
expect_in bad-toml.err "broken.toml: not valid TOML"
printf '[1]' >bad-env.json
expect_exit 1 bad-env -- "$heapprof" run env.js --env-json bad-env.json -o bad.pb.gz
expect_in bad-env.err "bad-env.json: expected a JSON object of name: value"
expect_exit 1 bad-kv -- "$heapprof" run env.js --kv-data USERS -o bad.pb.gz
expect_in bad-kv.err "--kv-data USERS: expected BINDING=FILE"
[ -e bad.pb.gz ] && fail "a refused run wrote bad.pb.gz"

finish
