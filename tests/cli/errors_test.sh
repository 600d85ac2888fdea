#!/usr/bin/env bash
# Bad input to `heapprof run` and `heapprof top`: a clear message, the right
# exit code (1 runtime, 2 usage) and no profile file left behind.
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
source "$here/lib.sh"

no_profile() {
  if compgen -G "*.pb.gz" >/dev/null || compgen -G ".*.tmp*" >/dev/null; then
    fail "$1 left a file behind: $(ls -a | tr '\n' ' ')"
    rm -f ./*.pb.gz ./.*.tmp*
  fi
}

printf 'export default { fetch( {\n' >syntax.js
printf 'function checkTenant(url) { throw new RangeError("no tenant for " + url); }\nexport default { fetch(r) { return new Response(checkTenant(r.url)); } };\n' >throws.js
printf 'async function load() { await null; throw new Error("session expired"); }\nexport default { async fetch() { await load(); return new Response("x"); } };\n' >rejects.js
printf 'const config = JSON.parse("{");\nexport default { fetch() { return new Response("x"); } };\n' >startup-throws.js
printf 'const keep = [];\nfunction hoard(r) { for (let i = 0; i < 5000; i++) keep.push({ url: r.url, i, pad: new Array(8).fill(i) }); }\nexport default { fetch(r) { hoard(r); return new Response("ok"); } };\n' >hog.js
printf 'export const notAWorker = 1;\n' >no-handler.js
clean="$examples/clean.js"

# Runtime errors: exit 1, message, no file.
expect_exit 1 missing -- "$heapprof" run missing.js
expect_in missing.err "no such worker file: missing.js"
no_profile missing

expect_exit 1 syntax -- "$heapprof" run syntax.js
expect_in syntax.err "SyntaxError"
expect_in syntax.err "syntax.js"
no_profile syntax

expect_exit 1 throws -- "$heapprof" run throws.js
expect_in throws.err "RangeError: no tenant for https://"
expect_in throws.err "at checkTenant ("
expect_in throws.err "no profile written"
no_profile throws

expect_exit 1 rejects -- "$heapprof" run rejects.js
expect_in rejects.err "rejected"
expect_in rejects.err "Error: session expired"
expect_in rejects.err "at load ("
no_profile rejects

expect_exit 1 startup-throws -- "$heapprof" run startup-throws.js
expect_in startup-throws.err "SyntaxError"
no_profile startup-throws

expect_exit 1 no-handler -- "$heapprof" run no-handler.js
expect_in no-handler.err "no default export"
no_profile no-handler

expect_exit 1 bad-output-dir -- "$heapprof" run "$clean" --requests 50 -o no/such/dir/x.pb.gz
expect_in bad-output-dir.err "no such directory"
expect_exit 1 bad-near-limit-dir -- "$heapprof" run "$clean" --requests 50 --on-heap-limit no/such/dir/near.pb.gz
expect_in bad-near-limit-dir.err "cannot write no/such/dir/near.pb.gz: no such directory no/such/dir"

# The heap limit before the window opened: said so, no file.
expect_exit 1 hog-warm -- "$heapprof" run hog.js --heap-limit 32 --warmup 1000
expect_in hog-warm.err "exceeded its heap limit of 32 MiB"
expect_in hog-warm.err "No profile was written"
no_profile hog-warm

# The heap limit inside the window: the in-use profile captured near the limit is written.
expect_exit 1 hog -- "$heapprof" run hog.js --heap-limit 32 --warmup 0 -o hog.pb.gz
expect_in hog.err "exceeded its heap limit of 32 MiB"
expect_in hog.out "Wrote the in-use profile captured near the heap limit to hog.pb.gz"
[ -s hog.pb.gz ] || fail "hog: no profile written near the heap limit"
[ "$(top_function hog.out inuse_space)" = "hoard" ] || fail "hog: hoard is not the top in-use function"
expect_exit 0 hog-top -- "$heapprof" top hog.pb.gz
[ "$(top_function hog-top.out inuse_space)" = "hoard" ] || fail "hog: heapprof top does not name hoard"
rm -f hog.pb.gz

# The heap limit while the module loads, with --from-start: the start-up profile is written.
printf 'function fillCache() { const rows = []; for (;;) rows.push({ id: rows.length, tags: new Array(8).fill(rows.length) }); }\nfillCache();\nexport default { fetch() { return new Response("x"); } };\n' >load-hog.js
expect_exit 1 load-hog -- "$heapprof" run load-hog.js --from-start --heap-limit 24 -o load-hog.pb.gz
expect_in load-hog.err "exceeded its heap limit of 24 MiB"
expect_in load-hog.out "Wrote the in-use profile captured near the heap limit to load-hog.pb.gz"
[ "$(top_function load-hog.out inuse_space)" = "fillCache" ] || fail "load-hog: fillCache is not the top in-use function"
rm -f load-hog.pb.gz

# Usage errors: exit 2, the flag named, no file.
usage() {
  local name="$1" text="$2"
  shift 2
  expect_exit 2 "$name" -- "$heapprof" "$@"
  expect_in "$name.err" "$text"
  no_profile "$name"
}
usage no-subcommand "subcommand" 
usage unknown-subcommand "unknown command \"frobnicate\"" frobnicate
usage run-no-worker "worker is required" run
usage unknown-flag "--bogus" run "$clean" --bogus
usage interval-unit "--interval" run "$clean" --interval 12x
usage interval-zero "--interval must be" run "$clean" --interval 0
usage interval-negative "negative" run "$clean" --interval -5
usage requests-zero "--requests" run "$clean" --requests 0
usage requests-negative "--requests" run "$clean" --requests -3
usage requests-text "--requests" run "$clean" --requests many
usage duration-unit "--duration" run "$clean" --duration 5q
usage window-unit "--window" run "$clean" --window soon
usage continuous-zero "--continuous must be more than 0" run "$clean" --continuous 0s
usage continuous-unit "--continuous" run "$clean" --continuous often
usage warmup-bad "--warmup" run "$clean" --warmup 2x
usage warmup-too-long "leaves nothing to profile" run "$clean" --requests 10 --warmup 20
usage warmup-from-start "--from-start" run "$clean" --from-start --warmup 10
usage heap-limit-small "--heap-limit must be between" run "$clean" --heap-limit 2
usage heap-limit-text "--heap-limit" run "$clean" --heap-limit lots
usage depth-zero "--depth" run "$clean" --depth 0
usage top-negative "--top" run "$clean" --top -1
usage sample-index-run "unknown --sample-index" run "$clean" --sample-index cpu
usage top-no-file "profile is required" top
usage top-rows "--rows" top x.pb.gz -n -2

# `heapprof top` on files that are not profiles.
expect_exit 1 top-missing -- "$heapprof" top missing.pb.gz
expect_in top-missing.err "cannot read missing.pb.gz"
expect_exit 1 top-not-pprof -- "$heapprof" top "$clean"
expect_in top-not-pprof.err "cannot read"

# Help on every subcommand, and the version.
for sub in "" run top; do
  expect_exit 0 "help-$sub" -- "$heapprof" $sub --help
  expect_in "help-$sub.out" "Usage:"
done
expect_in help-run.out "--from-start"
expect_in help-run.out "--heap-limit"
expect_in help-top.out "--sample-index"
expect_exit 0 version -- "$heapprof" --version
expect_in version.out "heapprof 0.1.0"
expect_in version.out "V8 10.2"

finish
