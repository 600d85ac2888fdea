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

# Every request fails: counted, exit 1 with the share and the first error, the
# stack in the outcome report, and the profile written all the same.
expect_exit 1 throws -- "$heapprof" run throws.js -n 300 -o throws.pb.gz
expect_in throws.err "100 % of 300 requests failed (300 threw), above the limit of 50 % (--max-failures)"
expect_in throws.err "first error: RangeError: no tenant for https://"
expect_in throws.err "the profile is written all the same"
expect_in throws.out "Requests: 300; responses by status: none; failed: 300 requests (100 %)"
expect_in throws.out "at checkTenant ("
[ -s throws.pb.gz ] || fail "throws: no profile written"
rm -f throws.pb.gz

expect_exit 1 rejects -- "$heapprof" run rejects.js -n 300 -o rejects.pb.gz
expect_in rejects.err "(300 rejected)"
expect_in rejects.out "rejected x300 (first at request #1): the handler's promise was rejected: Error: session expired"
expect_in rejects.out "at load ("
[ -s rejects.pb.gz ] || fail "rejects: no profile written"
rm -f rejects.pb.gz

# Occasional rejections and 5xx answers: counted, not fatal (exit 0).
printf 'let n = 0;
export default { async fetch() { n++; if (n %% 10 === 0) throw new Error("flaky backend"); if (n %% 25 === 0) console.error("slow"); return new Response("x", { status: n %% 20 === 1 ? 503 : 200 }); } };
' >occasional.js
expect_exit 0 occasional -- "$heapprof" run occasional.js -n 300 -o occasional.pb.gz
expect_in occasional.out "Requests: 300; responses by status: 200 x255, 503 x15; failed: 45 requests (15 %)"
expect_in occasional.out "30 rejected, 15 answered 5xx; console.error calls: 6"
expect_in occasional.out "rejected x30 (first at request #10): the handler's promise was rejected: Error: flaky backend"
[ -s occasional.pb.gz ] || fail "occasional: no profile written"
rm -f occasional.pb.gz
# ... unless the user's bar is lower.
expect_exit 1 occasional-strict -- "$heapprof" run occasional.js -n 300 --max-failures 10% -o strict.pb.gz
expect_in occasional-strict.err "15 % of 300 requests failed (30 rejected, 15 answered 5xx), above the limit of 10 %"
rm -f strict.pb.gz

# An error inside a response's body stream fails that request, counted; the run goes on.
printf 'let n = 0;
export default { fetch() { const broken = ++n %% 10 === 0; return new Response(new ReadableStream({ pull(c) { if (broken) throw new Error("upstream reset"); c.enqueue(new TextEncoder().encode("ok")); c.close(); } })); } };
' >stream-errors.js
expect_exit 0 stream-errors -- "$heapprof" run stream-errors.js -n 300 -o stream-errors.pb.gz
expect_in stream-errors.out "Requests: 300; responses by status: 200 x270; failed: 30 requests (10 %)"
expect_in stream-errors.out "x30 (first at request #10): Error: upstream reset"
expect_in stream-errors.out "stream-errors.js:2:"
rm -f stream-errors.pb.gz

# A request that loops forever is terminated at --request-timeout and counted; the run goes on.
printf 'let n = 0;
export default { fetch() { if (++n %% 4 === 0) for (;;) {} return new Response("x"); } };
' >loops.js
expect_exit 0 loops -- "$heapprof" run loops.js -n 12 --warmup 0 --request-timeout 500ms -o loops.pb.gz
expect_in loops.out "failed: 3 requests (25 %)"
expect_in loops.out "timed out x3 (first at request #4): ran longer than the time limit of 500 ms and was terminated"
[ -s loops.pb.gz ] || fail "loops: no profile written"
rm -f loops.pb.gz
# A module that loops at top level: terminated while loading, exit 1, no file without a window.
printf 'for (;;) {}
export default { fetch() { return new Response("x"); } };
' >top-loop.js
expect_exit 1 top-loop -- "$heapprof" run top-loop.js --request-timeout 100ms
expect_in top-loop.err "loading "
expect_in top-loop.err "ran longer than the time limit of 100 ms and was terminated"
no_profile top-loop

# The user's traffic: a file that cannot be read or parsed is an error before the run.
expect_exit 1 requests-missing -- "$heapprof" run "$clean" --requests-file missing.jsonl
expect_in requests-missing.err "missing.jsonl"
no_profile requests-missing
printf '{"url": "https://example.com/"}\n{"url": "/relative"}\n' >bad-requests.jsonl
expect_exit 1 requests-bad -- "$heapprof" run "$clean" --requests-file bad-requests.jsonl
expect_in requests-bad.err 'bad-requests.jsonl:2: the url "/relative" is not an absolute http:// or https:// URL'
no_profile requests-bad

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
usage interval-zero "--interval: must be between 1 byte and 1 GiB" run "$clean" --interval 0
usage interval-negative "negative" run "$clean" --interval -5
usage requests-zero "--requests" run "$clean" --requests 0
usage requests-negative "--requests" run "$clean" --requests -3
usage requests-text "--requests" run "$clean" --requests many
usage duration-unit "--duration" run "$clean" --duration 5q
usage window-unit "--window" run "$clean" --window soon
usage continuous-zero "--continuous: must be more than 0" run "$clean" --continuous 0s
usage continuous-unit "--continuous" run "$clean" --continuous often
usage warmup-bad "--warmup: takes a number of requests" run "$clean" --warmup 2x
# Every number is parsed once, by its flag's check: out of range or malformed is exit 2, never a crash.
usage warmup-huge "--warmup: 99999999999999999999999 is too large" run "$clean" --warmup 99999999999999999999999
usage duration-zero "--duration: must be more than 0" run "$clean" --duration 0s
usage duration-huge "--duration" run "$clean" --duration 99999999999999999999h
usage window-zero "--window: must be more than 0" run "$clean" --window 0ms
usage heap-limit-huge "--heap-limit: must be between 8 MiB and 64 GiB" run "$clean" --heap-limit 99999999999999999999999
usage interval-huge "--interval" run "$clean" --interval 99999999999999999999999KiB
usage request-timeout-tiny "--request-timeout: must be at least 1ms" run "$clean" --request-timeout 10us
usage serve-interval-zero "--interval: must be between 1 byte and 1 GiB" serve "$clean" --interval 0
usage serve-heap-limit-huge "--heap-limit: must be between 8 MiB and 64 GiB" serve "$clean" --heap-limit 99999999999
usage serve-request-timeout "--request-timeout" serve "$clean" --request-timeout soon
usage attach-duration-zero "--duration: must be more than 0" attach 127.0.0.1:1 --duration 0s
usage attach-timeout-tiny "--timeout: must be at least 1ms" attach 127.0.0.1:1 --timeout 10us
usage attach-interval-big "--interval: must be between 1 byte and 1 GiB" attach 127.0.0.1:1 --interval 2GiB
usage attach-warmup-tiny "--warmup: must be at least 1ms (or 0 for none)" attach 127.0.0.1:1 --warmup 10us
usage warmup-over-duration "leaves nothing to profile within --duration" run "$clean" --duration 1s --warmup 2s
usage warmup-too-long "leaves nothing to profile" run "$clean" --requests 10 --warmup 20
usage warmup-from-start "--from-start" run "$clean" --from-start --warmup 10
usage heap-limit-small "--heap-limit: must be between 8 MiB and 64 GiB" run "$clean" --heap-limit 2
usage heap-limit-text "--heap-limit" run "$clean" --heap-limit lots
usage depth-zero "--depth" run "$clean" --depth 0
usage top-negative "--top" run "$clean" --top -1
usage sample-index-run "unknown --sample-index" run "$clean" --sample-index cpu
usage max-failures-text "--max-failures: takes a share" run "$clean" --max-failures 2x
usage max-failures-big "--max-failures: cannot be above 100%" run "$clean" --max-failures 150%
usage request-timeout-text "--request-timeout" run "$clean" --request-timeout soon
usage header-without-url "give --url too" run "$clean" --header "X-A: 1"
usage url-relative "is not an absolute http" run "$clean" --url /path
usage url-and-file "alternatives" run "$clean" --url https://example.com/ --requests-file x.jsonl
usage header-no-colon "expected \"Name: value\"" run "$clean" --url https://example.com/ --header nocolon
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
