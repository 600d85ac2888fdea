#!/usr/bin/env bash
# Workers projects as their users have them (tests/projects: TypeScript in
# src/, npm packages, wrangler.jsonc with comments and trailing commas or
# wrangler.toml with [env.staging], text, data and wasm modules), each given as its folder, in both
# runtimes: heapprof bundles each with the project's own wrangler (deploy
# --dry-run), and the planted function is named at its src/index.ts line
# holding >= 80 % of in-use (the real shares are ~99 % with ~1000 samples,
# ±0.5 points: the bound is far beyond 5 standard deviations). Then the cache,
# heapprof's esbuild against wrangler's module list, --env, and the errors.
#   projects_test.sh <heapprof> <source dir> <work dir>
source "$(dirname "$0")/lib.sh"
export HEAPPROF_WORKERD="$src/.deps/workerd/bin/workerd"
[ -x "$HEAPPROF_WORKERD" ] || { echo "workerd is not installed (tools/bootstrap.sh)"; exit 1; }
projects="$src/tests/projects"
[ -x "$projects/node_modules/.bin/wrangler" ] || { echo "tests/projects is not installed (tools/bootstrap.sh)"; exit 1; }
export TMPDIR="$work/tmp" HEAPPROF_CACHE_DIR="$work/cache"
mkdir -p "$TMPDIR"

# body <responses file>: the first response's body.
body() { node -e 'const l = require("fs").readFileSync(process.argv[1], "utf8").split("\n")[0]; console.log(JSON.parse(l).body)' "$1"; }

# check_planted <name> <profile> <function> <line>: go tool pprof's in-use
# top names the function with >= 80 % flat, and heapprof's table names it at
# src/index.ts:<line>.
check_planted() {
  local name="$1" profile="$2" fn="$3" line="$4"
  go tool pprof -top -sample_index=inuse_space "$profile" >"$name.pprof" 2>/dev/null || fail "$name: go tool pprof failed"
  read -r flat _ < <(pprof_shares "$name.pprof" "$fn")
  awk -v f="$flat" 'BEGIN { exit !(f >= 80) }' || { fail "$name: $fn holds $flat % of in-use (want >= 80)"; cat "$name.pprof" >&2; }
  expect_in "$name.out" "$fn  src/index.ts:$line"
}

planted() {
  case "$1" in
    hello-world) echo "rememberVisit 14" ;;
    hono) echo "openSession 11" ;;
    staging) echo "greet 5" ;;
    sentry) echo "placeOrder 6" ;;
    modules) echo "keepAnswer 11" ;;
  esac
}

for p in hello-world hono staging sentry modules; do
  read -r fn line <<<"$(planted "$p")"
  expect_exit 0 "$p-embedded" -- "$heapprof" run "$projects/$p" --requests 1500 --warmup 100 --interval 16KiB \
    -o "$p-embedded.pb.gz" --top 5 --responses-out "$p-embedded.jsonl"
  expect_in "$p-embedded.err" "src/index.ts bundled by the project's wrangler 4.168.0 (deploy --dry-run)"
  expect_in "$p-embedded.out" "no request failed"
  check_planted "$p-embedded" "$p-embedded.pb.gz" "$fn" "$line"
  expect_exit 0 "$p-workerd" -- "$heapprof" run "$projects/$p" --runtime workerd --requests 1500 --warmup 100 \
    --interval 16KiB -o "$p-workerd.pb.gz" --top 5 --responses-out "$p-workerd.jsonl"
  expect_in "$p-workerd.err" "from the cache"  # the same inputs: wrangler is not run again
  expect_in "$p-workerd.out" "no request failed"
  check_planted "$p-workerd" "$p-workerd.pb.gz" "$fn" "$line"
done

# Text, Data and CompiledWasm modules answer alike in both runtimes.
for runtime in embedded workerd; do
  [ "$(body "modules-$runtime.jsonl")" = "Hello from a Text module; 2 + 3 = 5; table 1,2,3,4" ] ||
    fail "modules ($runtime) answered: $(body "modules-$runtime.jsonl")"
done

# create-cloudflare's Durable Object template: in workerd the object shares
# the worker's isolate, so its planted function is in the profile.
expect_exit 0 durable-object-workerd -- "$heapprof" run "$projects/durable-object" --runtime workerd --requests 1500 \
  --warmup 100 --interval 16KiB -o durable-object-workerd.pb.gz --top 5
expect_in durable-object-workerd.out "no request failed"
check_planted durable-object-workerd durable-object-workerd.pb.gz recordGreeting 18

# The config given as the worker, TOML with [env.staging]: vars are not
# inherited (FEATURE is unset there), .dev.vars.staging gives the secret, the
# top level reads .dev.vars. Both runtimes answer alike.
for runtime in embedded workerd; do
  flags=()
  [ "$runtime" = workerd ] && flags=(--runtime workerd)
  expect_exit 0 "staging-$runtime-env" -- "$heapprof" run "$projects/staging/wrangler.toml" "${flags[@]}" --env staging \
    --requests 20 --warmup 1 -o "staging-$runtime-env.pb.gz" --responses-out "staging-$runtime-env.jsonl"
  expect_in "staging-$runtime-env.err" "(deploy --dry-run --env staging)"
  [ "$(body "staging-$runtime-env.jsonl")" = "hello from staging; FEATURE=unset; SECRET=staging-secret" ] ||
    fail "staging ($runtime) --env staging answered: $(body "staging-$runtime-env.jsonl")"
  expect_exit 0 "staging-$runtime-top" -- "$heapprof" run "$projects/staging" "${flags[@]}" --requests 20 --warmup 1 \
    -o "staging-$runtime-top.pb.gz" --responses-out "staging-$runtime-top.jsonl"
  [ "$(body "staging-$runtime-top.jsonl")" = "hello from production; FEATURE=on; SECRET=local-secret" ] ||
    fail "staging ($runtime) answered: $(body "staging-$runtime-top.jsonl")"
done
expect_exit 1 staging-unknown-env -- "$heapprof" run "$projects/staging" --env qa --requests 5
expect_in staging-unknown-env.err 'no environment "qa" (--env): it has staging'

# heapprof's own bundler (esbuild with wrangler's settings) writes the same
# modules as the project's wrangler, and names the same planted function.
modules_of() {  # the bundle folder of a run's summary line: its modules, content hashes dropped
  local dir
  dir="$(sed -n 's/.* bundled by .*: \(\/.*\)\/[^/]*$/\1/p' "$1" | sed 's/ with .*//' | head -1)"
  [ -d "$dir" ] || { fail "$1: no bundle folder in its summary line"; return; }
  (cd "$dir" && find . -type f ! -name README.md ! -name '*.map' | sed 's|^\./||; s|^[0-9A-Za-z]\{8,\}-||' | sort | tr '\n' ' ')
}
for p in hello-world hono sentry modules; do
  read -r fn line <<<"$(planted "$p")"
  expect_exit 0 "$p-esbuild" -- "$heapprof" run "$projects/$p" --bundler esbuild --requests 1500 --warmup 100 \
    --interval 16KiB -o "$p-esbuild.pb.gz" --top 5
  expect_in "$p-esbuild.err" "src/index.ts bundled by heapprof's esbuild (wrangler's settings)"
  check_planted "$p-esbuild" "$p-esbuild.pb.gz" "$fn" "$line"
  [ "$(modules_of "$p-esbuild.err")" = "$(modules_of "$p-embedded.err")" ] ||
    fail "$p: heapprof's esbuild wrote modules [$(modules_of "$p-esbuild.err")], wrangler [$(modules_of "$p-embedded.err")]"
done

# Errors, with nothing written: a folder without a wrangler config, and a
# project whose source does not compile (wrangler's and esbuild's first lines).
mkdir -p empty broken/src
expect_exit 1 no-config -- "$heapprof" run empty -o no-config.pb.gz
expect_in no-config.err "empty is a folder without a wrangler.toml, wrangler.jsonc or wrangler.json"
cp "$projects/hello-world/wrangler.jsonc" "$projects/hello-world/tsconfig.json" broken/
printf 'export default {\n\tasync fetch(request: Request): Promise<Response> {\n\t\treturn new Response(;\n\t},\n};\n' \
  >broken/src/index.ts
ln -s "$projects/node_modules" broken/node_modules
# A project's rules typing a file as Text by a glob (wrangler honours it):
# workerd is given that type; the embedded runtime, which types modules by
# extension, refuses up front rather than load it as JavaScript.
mkdir -p rules/src
ln -s "$projects/node_modules" rules/node_modules
printf '# Notes\n' >rules/src/notes.md
printf 'import notes from "./notes.md";\nexport default { async fetch() { return new Response(notes); } };\n' \
  >rules/src/index.ts
printf '{ "name": "rules", "main": "src/index.ts", "compatibility_date": "2026-10-06",\n  "rules": [{ "type": "Text", "globs": ["**/*.md"] }], }\n' \
  >rules/wrangler.jsonc
expect_exit 1 rules-embedded -- "$heapprof" run rules --requests 5 -o rules-embedded.pb.gz
expect_in rules-embedded.err "a module of another type than its extension, which the embedded runtime cannot load"
expect_exit 0 rules-workerd -- "$heapprof" run rules --runtime workerd --requests 5 -o rules-workerd.pb.gz \
  --responses-out rules-workerd.jsonl
[ "$(body rules-workerd.jsonl)" = "# Notes" ] || fail "rules (workerd) answered: $(body rules-workerd.jsonl)"

for bundler in wrangler esbuild; do
  expect_exit 1 "broken-$bundler" -- "$heapprof" run broken --bundler "$bundler" -o "broken-$bundler.pb.gz"
  expect_in "broken-$bundler.err" "could not bundle src/index.ts"
  expect_in "broken-$bundler.err" "src/index.ts:3"
  [ ! -e "broken-$bundler.pb.gz" ] || fail "broken-$bundler: a profile was written"
done
finish
