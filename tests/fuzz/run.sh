#!/usr/bin/env bash
# Builds heapprof's libFuzzer targets with clang and runs each on its corpus:
#   tests/fuzz/run.sh [seconds per target] [target...]
# e.g.  tests/fuzz/run.sh 600               every target for 10 minutes, one after the other
#       tests/fuzz/run.sh 60 source_map units
#       tests/fuzz/run.sh 0                  build only
# Targets: the *_fuzz.cpp files beside this script (pprof_reader, heapprofile,
# source_map, units). Each run reads tests/fuzz/corpus/<target>/ and writes
# what it finds to a scratch corpus, so the committed corpus stays small.
# Exits non-zero when a target crashes, leaks, times out or runs out of
# memory; the input is saved as <work>/<target>/crash-* (add it to the
# committed corpus once the bug is fixed: the CTest replay keeps it fixed).
#
# Environment:
#   HEAPPROF_FUZZ_BUILD  cmake build dir that provides the generated protobuf
#                        sources (default <repo>/build-fuzz; configured and its
#                        heapprof_proto target built when missing)
#   HEAPPROF_FUZZ_OUT    where binaries, objects and scratch corpora go
#                        (default $HEAPPROF_FUZZ_BUILD/fuzzers)
#   HEAPPROF_FUZZ_JOBS   parallel compiles (default 2)
set -euo pipefail

# All in one function: bash has read the whole script before it runs, so
# editing this file during a long run cannot derail it.
main() {
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
seconds="${1:-60}"
shift || true
if ! [[ "$seconds" =~ ^[0-9]+$ ]]; then
  echo "usage: $0 [seconds per target] [target...]" >&2
  exit 2
fi
all_targets=()
for f in "$here"/*_fuzz.cpp; do
  name="$(basename "$f" .cpp)"
  all_targets+=("${name%_fuzz}")
done
targets=("$@")
[[ ${#targets[@]} -gt 0 ]] || targets=("${all_targets[@]}")
for t in "${targets[@]}"; do
  if [[ ! -f "$here/${t}_fuzz.cpp" ]]; then
    echo "unknown fuzz target '$t' (have: ${all_targets[*]})" >&2
    exit 2
  fi
done

build="${HEAPPROF_FUZZ_BUILD:-$root/build-fuzz}"
out="${HEAPPROF_FUZZ_OUT:-$build/fuzzers}"
jobs="${HEAPPROF_FUZZ_JOBS:-2}"
generated="$build/generated"
proto="$generated/heapprof/proto/profile.pb.cc"
if [[ ! -f "$proto" ]]; then
  echo "== generating protobuf sources in $build"
  [[ -f "$build/CMakeCache.txt" ]] || cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
  cmake --build "$build" --target heapprof_proto -j "$jobs" >/dev/null
fi

# The core sources the targets reach, instrumented for coverage and sanitizers.
core=(pprof_reader pprof_wire_check pprof_writer pprof_validate gzip file_io profile heapprofile folded report
      source_map units)
flags=(-std=c++20 -O1 -g -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=undefined
       -I"$root/include" -I"$root" -I"$generated")
mkdir -p "$out/obj"
# Rebuilt when its source or any header changed since (a coarse but safe rule).
stale() {
  local obj="$1" src="$2"
  [[ ! -f "$obj" || "$src" -nt "$obj" ]] && return 0
  [[ -n "$(find "$root/include" "$root/heapprof/core" -name '*.h' -newer "$obj" -print -quit)" ]]
}
compile=()
for s in "${core[@]}"; do
  stale "$out/obj/$s.o" "$root/heapprof/core/$s.cpp" && compile+=("$root/heapprof/core/$s.cpp:$out/obj/$s.o")
done
stale "$out/obj/profile.pb.o" "$proto" && compile+=("$proto:$out/obj/profile.pb.o")
if [[ ${#compile[@]} -gt 0 ]]; then
  echo "== compiling ${#compile[@]} core sources with clang"
  printf '%s\n' "${compile[@]}" |
    xargs -P "$jobs" -I{} bash -c 'src="${1%%:*}"; obj="${1#*:}"; shift; clang++ "$@" -fsanitize=fuzzer-no-link -c "$src" -o "$obj"' \
      _ {} "${flags[@]}"
fi
# clang 14 cannot capture structured bindings in lambdas (profile_builder.cpp
# does): that file, which the readers only call, is compiled with g++.
if stale "$out/obj/profile_builder.o" "$root/heapprof/core/profile_builder.cpp"; then
  g++ -std=c++20 -O1 -g -I"$root/include" -c "$root/heapprof/core/profile_builder.cpp" -o "$out/obj/profile_builder.o"
fi
rm -f "$out/obj/libcore.a"
ar rcs "$out/obj/libcore.a" "$out/obj"/*.o

for t in "${targets[@]}"; do
  echo "== building ${t}_fuzz"
  clang++ "${flags[@]}" -fsanitize=fuzzer "$here/${t}_fuzz.cpp" "$out/obj/libcore.a" \
    -lprotobuf -lz -lfmt -o "$out/${t}_fuzz"
done
[[ "$seconds" -gt 0 ]] || return 0

failed=()
for t in "${targets[@]}"; do
  work="$out/work/$t"
  mkdir -p "$work/corpus"
  cp -n "$here/corpus/$t"/* "$work/corpus/" 2>/dev/null || true
  dict=()
  [[ -f "$here/$t.dict" ]] && dict=(-dict="$here/$t.dict")
  log="$work/last.log"
  echo "== fuzzing $t for ${seconds}s (log: $log)"
  status=0
  # -timeout: an input slower than 10 s is a hang, and fails the run like a crash.
  "$out/${t}_fuzz" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2560 -print_final_stats=1 \
    -artifact_prefix="$work/" "${dict[@]}" "$work/corpus" >"$log" 2>&1 || status=$?
  grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -1 || true
  grep -E 'stat::number_of_executed_units|stat::peak_rss_mb' "$log" || true
  if [[ $status -ne 0 ]]; then
    echo "!! $t failed (exit $status); last lines of $log:"
    tail -40 "$log"
    ls "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-* 2>/dev/null || true
    failed+=("$t")
  fi
done
if [[ ${#failed[@]} -gt 0 ]]; then
  echo "FAILED: ${failed[*]}"
  exit 1
fi
echo "all ${#targets[@]} targets ran ${seconds}s without a failure"
}

main "$@"
