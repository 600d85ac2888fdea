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

# --responses-out: every response in order, what the worker saw (Host, the
# body's length, no invented content-type), bytes as base64, errors as errors.
cat >echo.js <<'JS'
export default { async fetch(request) {
  const url = new URL(request.url);
  if (url.pathname === '/throw') throw new Error('no such thing');
  if (url.pathname === '/bytes') return new Response(new Uint8Array([0, 255, 1]), { headers: { 'x-kind': 'bytes' } });
  const seen = [...request.headers].filter(([name]) => name !== 'cf-ray');
  return Response.json({ method: request.method, seen, body: await request.text() }, { status: 201 });
} };
JS
cat >echo.jsonl <<'JSONL'
{"method": "POST", "url": "https://api.example.com/a?x=1", "body": "héllo"}
{"url": "http://localhost:8787/bytes", "headers": {"Host": "override.example"}}
{"url": "https://api.example.com/throw"}
JSONL
expect_exit 0 responses -- "$heapprof" run echo.js --requests-file echo.jsonl -n 3 --warmup 0 --max-failures 100% \
  --top 0 -o echo.pb.gz --responses-out responses.jsonl
node - responses.jsonl <<'JS' || fail "responses-out: $(cat responses.jsonl)"
const lines = require('fs').readFileSync(process.argv[2], 'utf8').trim().split('\n').map(JSON.parse);
const assert = require('assert');
assert.strictEqual(lines.length, 3);
assert.deepStrictEqual(lines.map(l => l.index), [0, 1, 2]);
assert.strictEqual(lines[0].status, 201);
assert.deepStrictEqual(lines[0].headers, [['content-type', 'application/json']]);
assert.deepStrictEqual(JSON.parse(lines[0].body),
  { method: 'POST', seen: [['content-length', '6'], ['host', 'api.example.com']], body: 'héllo' });
assert.strictEqual(lines[1].body_base64, 'AP8B');
assert.deepStrictEqual(lines[1].headers, [['x-kind', 'bytes']]);
assert.match(lines[2].error, /Error: no such thing/);
assert.strictEqual(lines[2].status, undefined);
JS
expect_exit 2 responses-replicas -- "$heapprof" run echo.js --replicas 2 --responses-out r.jsonl -o r.pb.gz
expect_in responses-replicas.err "--responses-out records the responses of one isolate in order; drop --replicas"
# workerd records responses too (tests/cli/workerd_test.sh), but not of replicas either.
expect_exit 2 responses-workerd -- "$heapprof" run echo.js --runtime workerd --responses-out r.jsonl --replicas 2
expect_in responses-workerd.err "--replicas does not work with --runtime workerd"
[ -e r.jsonl ] && fail "a refused run wrote r.jsonl"

finish
