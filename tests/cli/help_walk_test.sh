#!/usr/bin/env bash
# The --help walk: every subcommand's --help runs and exits 0, and every flag
# `heapprof run --help` lists is, in each runtime, either refused up front
# with a message naming it or honoured, shown by what it changed (no flag
# accepted and ignored). The flags' table below must name every flag --help
# lists: a new flag fails this test until it says what the flag does in each
# runtime. workerd mode's honoured flags share a few short runs of a worker
# whose routes show what each flag gave it.
#   help_walk_test.sh <heapprof> <source dir> <work dir>
source "$(dirname "$0")/lib.sh"
export HEAPPROF_WORKERD="$src/.deps/workerd/bin/workerd"
[ -x "$HEAPPROF_WORKERD" ] || { echo "workerd is not installed (tools/bootstrap.sh)"; exit 1; }
export TMPDIR="$work/tmp"
mkdir -p "$TMPDIR"
data="$src/tests/cli/data/help_walk"
js="$src/tests/js/node_modules"

flags_of() { "$heapprof" "$@" --help | grep -oE '^ +(-[a-zA-Z],)?--[a-z0-9-]+' | sed 's/^ *//; s/^-[a-zA-Z],//'; }

# Every subcommand's --help.
"$heapprof" --help >main.help || fail "heapprof --help exited $?"
subcommands="$(sed -n '/^Subcommands:/,$p' main.help | grep -oE '^  [a-z]+' | tr -d ' ')"
[ "$(echo "$subcommands" | wc -w)" -ge 7 ] || fail "heapprof --help lists only: $subcommands"
for sub in $subcommands; do
  expect_exit 0 "help-$sub" -- "$heapprof" "$sub" --help
  [ "$(flags_of "$sub" | wc -l)" -ge 2 ] || fail "$sub --help lists no flags"
done

# run's flags in each runtime: "refused" (exit 2 before anything starts, the
# message names the flag), or the check below that shows the flag's effect.
declare -A embedded workerd value
table() {  # <flag> <value or -> <embedded> <workerd>
  value[$1]="$2"
  embedded[$1]="$3"
  workerd[$1]="$4"
}
# Flags the embedded runtime honours are exercised there by the suite's other
# tests (modes_test: every run flag in every embedded mode; config_test,
# bindings_test, subrequests_test, leaks_run_test): "elsewhere".
table --help - elsewhere elsewhere
table --push http://127.0.0.1:9/ refused refused
# The push's own flags: honoured with --continuous --push in the embedded
# runtime (push tests), refused without --push URL in both, and in workerd
# mode as --push is (attach --continuous --push is the way there).
table --push-label a=b elsewhere refused
table --push-token-file /etc/hostname elsewhere refused
table --push-tenant t elsewhere refused
table --push-ca-file /etc/hostname elsewhere refused
table --push-queue 4 elsewhere refused
table --requests 40 elsewhere checked
table --duration 1s elsewhere checked
table --warmup 4 elsewhere checked
table --window 300ms elsewhere checked
table --interval 16KiB elsewhere checked
table --depth 32 elsewhere refused
table --heap-limit 64MiB elsewhere refused
table --from-start - elsewhere refused
table --output - elsewhere checked
table --fallback-dir - elsewhere checked
table --flamegraph - elsewhere checked
table --top - elsewhere checked
table --user-code - elsewhere checked
table --sample-index - elsewhere checked
table --v8-flag - elsewhere checked
table --replicas 2 elsewhere refused
table --profile x elsewhere refused
table --object-idle-limit 1s elsewhere refused
table --continuous 1s elsewhere refused
table --on-heap-limit near.pb.gz elsewhere refused
table --allow-inlining - elsewhere checked
table --no-gc - elsewhere checked
table --requests-file - elsewhere checked
table --responses-out - elsewhere checked
table --url - elsewhere checked
table --method - elsewhere checked
table --header - elsewhere checked
table --body - elsewhere checked
table --config - elsewhere checked
table --env-json - elsewhere checked
# A project's environment and bundler: tests/projects/projects_test.sh, in both runtimes.
table --env - elsewhere elsewhere
table --bundler - elsewhere elsewhere
table --kv-data - elsewhere checked
table --compatibility-date - elsewhere checked
table --compatibility-flag - elsewhere checked
table --ignore-config-key - elsewhere checked
table --fetch-handler - elsewhere checked
table --max-failures - elsewhere checked
table --request-timeout - elsewhere checked
table --runtime - elsewhere checked
table --sample-types alloc refused checked
table --workerd /bin/true refused checked
table --service auth=svc/auth refused checked
table --leaks - elsewhere refused
table --cadence 1s elsewhere refused
table --leaks-json leaks.json elsewhere refused
table --no-source-maps - elsewhere checked
table --source-map-path - elsewhere checked
for flag in $(flags_of run); do
  [ -n "${workerd[$flag]:-}" ] || fail "run --help lists $flag, which this test's table does not name: say what it does in each runtime"
done

# Refused up front, with the flag named, in the runtime that cannot honour it.
printf 'export default { fetch() { return new Response("ok"); } };\n' >plain.js
refused() {  # <runtime> <flag>
  local name="refused-$1${2//[^a-z]/-}" v="${value[$2]}"
  local args=("$2")
  [ "$v" != - ] && args+=("$v")
  expect_exit 2 "$name" -- "$heapprof" run plain.js --runtime "$1" "${args[@]}" -n 5 -o x.pb.gz
  expect_in "$name.err" "$2"
}
for flag in "${!workerd[@]}"; do
  [ "${embedded[$flag]}" = refused ] && refused embedded "$flag"
  [ "${workerd[$flag]}" = refused ] && refused workerd "$flag"
done
[ -e x.pb.gz ] && fail "a refused flag's run wrote a profile"

# workerd mode's honoured flags, shown by their effects. The worker: a
# TypeScript bundle whose map lies outside its folder (--source-map-path).
cp -r "$data/app" "$data/svc" "$data/handler.js" "$data/env.json" "$data/kv.json" .
NODE_PATH="$js" "$js/.bin/esbuild" "$data/worker.ts" --bundle --format=esm --sourcemap --log-level=warning \
  --external:'node:*' --outfile=app/dist/worker.js
mkdir -p maps && mv app/dist/worker.js.map maps/
sed -i 's|sourceMappingURL=worker.js.map|sourceMappingURL=../../maps/worker.js.map|' app/dist/worker.js
body_of() {  # <responses file> <url>: the first record's body for the URL
  node -e 'const [f, u] = process.argv.slice(1);
    const r = require("fs").readFileSync(f, "utf8").trim().split("\n").map(JSON.parse).find(r => r.url === u);
    process.stdout.write(r ? r.body ?? r.error : "(none)")' "$1" "$2"
}
comments() { gzip -dc "$1" | tr -c '[:print:]' '\n'; }
mkdir -p out
expect_exit 0 a -- "$heapprof" run app --runtime workerd --workerd "$HEAPPROF_WORKERD" --sample-types both \
  --requests 40 --warmup 4 --interval 2KiB -o out/a.pb.gz --flamegraph a.html --top 2 --user-code \
  --sample-index alloc_space --v8-flag --stack-size=900 --requests-file "$data/requests.jsonl" --responses-out a.jsonl \
  --config app/wrangler.toml --env-json env.json --kv-data CACHE=kv.json --compatibility-date 2025-02-02 \
  --compatibility-flag nodejs_compat --ignore-config-key r2_buckets --fetch-handler handler.js --max-failures 100% \
  --request-timeout 5s --service auth=svc/auth --source-map-path maps
expect_in a.out "Requests: 40; "                                   # --requests
expect_in a.out "warm-up  4 requests before the first window"      # --warmup
expect_in a.out "one sample per 2.0 KiB"                          # --interval
[ -s out/a.pb.gz ] || fail "-o: no out/a.pb.gz"                    # --output
grep -q "<html" a.html || fail "--flamegraph: no page"             # --flamegraph
expect_in a.out "alloc_space:"                                     # --sample-index
grep -q "^inuse_space:" a.out && fail "--sample-index alloc_space printed an inuse_space table"
rows="$(awk '/^alloc_space:/ {t = 1; next} t && /flat%/ {h = 1; next} h && !/^ +[0-9]/ {exit} h {n++} END {print n + 0}' a.out)"
[ "$rows" = 2 ] || fail "--top 2 printed $rows rows"           # --top
expect_in a.out " by flat (your code)"                              # --user-code
comments out/a.pb.gz >a.strings
expect_in a.strings "--stack-size=900"                             # --v8-flag
expect_in a.strings "compatibility_date: 2025-02-02"               # --compatibility-date
expect_in a.strings "inlining: disabled"
expect_in a.strings "full GC first"
expect_in a.strings "worker.ts"                                    # --source-map-path
[ "$(grep -c . a.jsonl)" = 40 ] || fail "--responses-out: not 40 records"
want='{"greeting":"from wrangler.toml","fromEnvJson":"from --env-json","kv":"from --kv-data","auth":"auth answered","outbound":"handler answered","buffer":"hello"}'
[ "$(body_of a.jsonl https://walk.example/env)" = "$want" ] ||     # --config --env-json --kv-data --service
  fail "the worker's env: $(body_of a.jsonl https://walk.example/env)"   # --fetch-handler --compatibility-flag
expect_in a.err "r2_buckets (R2 buckets; --ignore-config-key)"     # --ignore-config-key
expect_in a.out "failed: 10 requests"                              # --max-failures 100 %: exit 0
expect_in a.out "planted failure"
# The opposite settings.
mkdir -p fallback
expect_exit 1 b -- "$heapprof" run app --runtime workerd --url https://walk.example/slow --requests 6 --warmup 1 \
  --request-timeout 300ms --allow-inlining --no-gc --no-source-maps --max-failures 10% --service auth=svc/auth \
  --ignore-config-key r2_buckets --compatibility-flag nodejs_compat --fallback-dir fallback -o b.pb.gz --top 0
expect_in b.out "timed out"                                        # --request-timeout
expect_in b.err "above the limit of 10 % (--max-failures)"         # --max-failures
comments b.pb.gz >b.strings
expect_in b.strings "inlining: allowed"                            # --allow-inlining
grep -q "full GC first" b.strings && fail "--no-gc: the in-use window had a GC"
grep -q "worker.ts" b.strings && fail "--no-source-maps: the profile names worker.ts"
grep -q "worker.ts" b.err && fail "--no-source-maps: source maps were read"
expect_exit 1 fallback -- "$heapprof" run app --runtime workerd --fallback-dir a.html -n 5 -o x.pb.gz \
  --service auth=svc/auth --ignore-config-key r2_buckets                                           # --fallback-dir
expect_in fallback.err "a.html"
expect_exit 0 c -- "$heapprof" run app --runtime workerd --url https://walk.example/echo --method POST \
  --header "x-test: walked" --body "the body" --duration 1s --warmup 1 --responses-out c.jsonl -o c.pb.gz --top 0 \
  --service auth=svc/auth --ignore-config-key r2_buckets --compatibility-flag nodejs_compat
[ "$(body_of c.jsonl https://walk.example/echo)" = '{"method":"POST","header":"walked","body":"the body"}' ] ||
  fail "--url --method --header --body: $(body_of c.jsonl https://walk.example/echo)"
expect_in c.err "allocation window open for 0.50 s"                          # --duration: two windows of half
expect_exit 0 d -- "$heapprof" run app --runtime workerd --window 300ms --warmup 1 --sample-types inuse -o d.pb.gz \
  --top 0 --service auth=svc/auth --ignore-config-key r2_buckets --compatibility-flag nodejs_compat
expect_in d.err "in-use window open for 0.30 s"                                         # --window
expect_in d.out "inuse_* only"                                      # --sample-types
expect_exit 1 e -- "$heapprof" run plain.js --runtime workerd --workerd ./no-such-workerd -n 5 -o x.pb.gz
expect_in e.err "workerd not found at ./no-such-workerd"            # --workerd
pgrep -f "$TMPDIR/heapprof-workerd-" >/dev/null && fail "workerd processes left behind"

finish
