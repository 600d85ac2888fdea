#!/usr/bin/env bash
# What workerd offers and the embedded runtime lacks (docs/runtime.md) fails
# with a message that says so and points at --runtime workerd, counted as
# the request's failure (a non-zero exit, the message in the run's outcome),
# never as a ReferenceError that reads like a bug of the worker. And
# HTMLRewriter, which the runtime has, runs lol-html's WebAssembly module,
# whose glue frames the profile names by package file.
#   runtime_missing_test.sh <heapprof> <source dir> <work dir>
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
source "$here/lib.sh"

say="is not available in heapprof's embedded runtime; profile this worker in workerd with --runtime workerd"

# Each missing global, used inside the handler: every request fails with the message.
for use in 'new WebSocketPair()' "new WebSocket('wss://example.com/')" "new EventSource('https://example.com/')" \
           "navigator.sendBeacon('https://example.com/', 'x')"; do
  name="$(echo "$use" | sed -E 's/^new //; s/[(.].*//')"
  [ "$name" = navigator ] && name=navigator.sendBeacon
  echo "export default { fetch() { $use; return new Response('served'); } };" >"$name.js"
  expect_exit 1 "$name" -- "$heapprof" run "$name.js" -n 3 --warmup 0 -o "$name.pb.gz" --top 0
  expect_in "$name.out" "Error: $name $say"
  expect_in "$name.out" "failed: 3 requests (100 %)"
  if grep -q ReferenceError "$name.out"; then fail "$name: a ReferenceError in $name.out"; fi
done

# Feature detection sees them, as in workerd: only using one fails.
echo "export default { fetch() { return new Response([typeof WebSocketPair, typeof EventSource, typeof navigator.sendBeacon].join()); } };" >detect.js
expect_exit 0 detect -- "$heapprof" run detect.js -n 2 --warmup 0 -o detect.pb.gz --top 0 --responses-out detect.jsonl
expect_in detect.jsonl '"body":"function,function,function"'

# workerd's built-in modules: the worker cannot load, and the run says why.
printf "import { connect } from 'cloudflare:sockets';\nexport default { fetch() { return new Response(typeof connect); } };\n" >sockets.js
expect_exit 1 sockets -- "$heapprof" run sockets.js -n 2 -o sockets.pb.gz
expect_in sockets.err "\"cloudflare:sockets\" $say"
# node: modules without the nodejs_compat flag, as in workerd.
printf "import { Buffer } from 'node:buffer';\nexport default { fetch() { return new Response(Buffer.from('x')); } };\n" >node.js
expect_exit 1 node -- "$heapprof" run node.js -n 2 -o node.pb.gz
expect_in node.err "\"node:buffer\" $say"
# cloudflare:workers is there: a WorkerEntrypoint class answers.
printf "import { WorkerEntrypoint } from 'cloudflare:workers';\nexport default class extends WorkerEntrypoint { fetch() { return new Response('x'); } }\n" >entry.js
expect_exit 0 entry -- "$heapprof" run entry.js -n 2 --warmup 0 -o entry.pb.gz --top 0 --responses-out entry.jsonl
expect_in entry.jsonl '"body":"x"'

# HTMLRewriter: rewritten bodies, and lol-html's glue frames named by package file.
cat >rewrite.js <<'JS'
const kept = [];
export default {
  async fetch(request) {
    const page = '<html><body>' + '<p class="x"><a href="/a">link</a> text</p>'.repeat(200) + '</body></html>';
    const out = new HTMLRewriter()
      .on('a', { element(e) { e.setAttribute('href', 'https://cdn.example' + e.getAttribute('href')); } })
      .on('p', { text(t) { if (t.lastInTextNode) kept.push(t.text); } })
      .transform(new Response(page));
    const text = await out.text();
    if (kept.length > 5000) kept.length = 0;
    return new Response(text.includes('href="https://cdn.example/a"') ? 'rewritten' : 'NOT rewritten');
  },
};
JS
expect_exit 0 rewrite -- "$heapprof" run rewrite.js -n 60 --warmup 10 --interval 16KiB -o rewrite.pb.gz --responses-out rewrite.jsonl
expect_in rewrite.jsonl '"body":"rewritten"'
if grep -q 'NOT rewritten' rewrite.jsonl; then fail "a response was not rewritten (rewrite.jsonl)"; fi
go tool pprof -top -lines -nodecount=100000 -sample_index=alloc_space rewrite.pb.gz 2>/dev/null |
  awk '$NF ~ /:[0-9]+$/ { print $NF }' | sort -u >rewrite.files
grep -qE '^heapprof:runtime-libraries/html-rewriter-wasm/dist/html_rewriter.js:[0-9]+$' rewrite.files ||
  fail "no frame names html-rewriter-wasm's glue (rewrite.files)"

finish
