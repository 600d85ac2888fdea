#!/usr/bin/env bash
# heapprof attach --leaks against a real `node --inspect` target holding an
# LRU cache and a leak of about the same bytes (tests/remote/leak_lru_target.mjs):
# the leak is growing, the cache is not; the pprof file's in-use samples carry
# the age label (go tool pprof -tagfocus), the JSON sidecar the verdicts.
# Then the flags that belong to --leaks only, and a sampler already running.
#   leaks_attach_test.sh <heapprof> <source dir> <work dir>
source "$(dirname "$0")/lib.sh"
# shellcheck source=../pprof_readers/go_env.sh
source "$src/tests/pprof_readers/go_env.sh"
go_env "$work"
target="$src/tests/remote/leak_lru_target.mjs"
node_flags=(--no-turbo-inlining --no-maglev-inlining --no-turbo-inline-array-builtins)

pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

start_node() {
  node --inspect=127.0.0.1:0 "${node_flags[@]}" "${@:2}" "$target" 2>"$1.node.err" &
  node_pid=$!
  pids+=("$node_pid")
  for _ in $(seq 1 100); do
    inspector="$(sed -n 's#^Debugger listening on ws://\(127.0.0.1:[0-9]*\)/.*#\1#p' "$1.node.err")"
    if [ -n "$inspector" ] && grep -q "node target ready" "$1.node.err"; then return 0; fi
    sleep 0.1
  done
  fail "$1: the node target did not start"; sed 's/^/    /' "$1.node.err" >&2
  return 1
}

# verdict <json> <function>: the verdict of the site whose leaf is the function.
verdict() {
  node -e '
    const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
    const s = r.sites.find((s) => s.frames.length && s.frames[0].function === process.argv[2]);
    console.log(s ? s.verdict : "absent");' "$1" "$2"
}

start_node leaks
expect_exit 0 leaks -- "$heapprof" attach "$inspector" --leaks --duration 16s --cadence 1s --interval 16KiB \
  -o leaks.pb.gz --leaks-json leaks.json --top 5
expect_in leaks.err "leak session on"
expect_in leaks.out "Growth over"
expect_in leaks.out "limit in ~"
leak="$(verdict leaks.json keepForever)"
cache="$(verdict leaks.json cacheEntry)"
echo "keepForever: $leak, cacheEntry: $cache"
[ "$leak" = growing ] || fail "the leak's verdict is $leak, not growing"
case "$cache" in growing | absent) fail "the cache's verdict is $cache" ;; esac
# The two hold about the same bytes at the end (within a factor of 3).
node -e '
  const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  const live = (f) => r.sites.filter((s) => s.frames.length && s.frames[0].function === f).reduce((a, s) => a + s.live_bytes, 0);
  const a = live("keepForever"), b = live("cacheEntry");
  console.log(`live: keepForever ${a}, cacheEntry ${b}`);
  process.exit(a > 0 && b > 0 && a / b < 3 && b / a < 3 ? 0 : 1);' leaks.json || fail "the leak and the cache do not hold about the same bytes"
# The profile: in-use samples with their age; the old ones are the cache's prefill and the early leak.
go tool pprof -raw leaks.pb.gz 2>/dev/null | grep -q "leaks: heap used" || fail "the profile's comments lack the growth report"
all="$(go tool pprof -top -sample_index=inuse_space leaks.pb.gz 2>/dev/null | grep -c 'keepForever' || true)"
[ "$all" -ge 1 ] || fail "keepForever is not in the profile"
old="$(go tool pprof -top -sample_index=inuse_space -tagfocus=age=10: leaks.pb.gz 2>/dev/null | awk '/Showing nodes accounting/ {print $5}')"
young="$(go tool pprof -top -sample_index=inuse_space -tagfocus=age=:9 leaks.pb.gz 2>/dev/null | awk '/Showing nodes accounting/ {print $5}')"
echo "in-use at least 10 s old: $old; younger: $young"
case "$old$young" in "" | 0,* | *0,) fail "-tagfocus=age selects nothing on one side" ;; esac

# Flags of --leaks alone, and --sample-types with it.
expect_exit 2 cadence -- "$heapprof" attach "$inspector" --cadence 1s -d 1s -o cadence.pb.gz
expect_in cadence.err "belong to --leaks"
expect_exit 2 types -- "$heapprof" attach "$inspector" --leaks --sample-types alloc -d 1s -o types.pb.gz
expect_in types.err "--sample-types does not apply"

# A second session while the first one runs: refused, the first unharmed.
"$heapprof" attach "$inspector" --leaks -d 4s --top 0 -o first.pb.gz >first.out 2>first.err &
first=$!
for _ in $(seq 1 50); do grep -q "leak session on" first.err && break; sleep 0.1; done
expect_exit 1 second -- "$heapprof" attach "$inspector" --leaks -d 1s -o second.pb.gz
expect_in second.err "sampling heap profiler is already running"
wait "$first" || fail "the first session failed: $(cat first.err)"
[ -s first.pb.gz ] || fail "the first session wrote no profile"
# The limit the projection aims at: Node's --max-old-space-size (where V8 ends
# the target), not heap_size_limit (112 MiB here: it adds the young
# generation's reserve).
start_node limit --max-old-space-size=64
expect_exit 0 limit -- "$heapprof" attach "$inspector" --leaks --duration 3s --cadence 1s --top 0 \
  -o limit.pb.gz --leaks-json limit.json
node -e '
  const p = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).projection;
  console.log(p.text);
  process.exit(p.heap_limit_bytes === 64 * 1048576 && /--max-old-space-size/.test(p.limit_source) ? 0 : 1);' limit.json ||
  fail "limit: the projection does not aim at --max-old-space-size=64"
expect_in limit.out "of the 64.00 MiB limit (--max-old-space-size"

for f in cadence types second; do
  [ ! -e "$f.pb.gz" ] || fail "$f: an output file was written"
done
finish
