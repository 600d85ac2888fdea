#!/usr/bin/env bash
# Builds heapprof with sanitizers in a build directory of its own and runs the
# tests under them (the runtimes' options and suppressions are compiled into
# every executable: tools/sanitizers/).
#   tools/test_sanitized.sh asan [ctest args...]  ASan + LeakSanitizer + UBSan in build-asan/:
#                                                 the whole suite but the Node.js addon
#                                                 and compile-only checks
#   tools/test_sanitized.sh tsan [ctest args...]  ThreadSanitizer in build-tsan/: the threaded
#                                                 tests (controller, heapprof run --replicas)
# $HEAPPROF_ASAN_BUILD_DIR / $HEAPPROF_TSAN_BUILD_DIR move the build directories.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
mode="${1:-}"
[ $# -gt 0 ] && shift
case "$mode" in
  asan)
    sanitize=address,undefined
    build="${HEAPPROF_ASAN_BUILD_DIR:-$root/build-asan}"
    targets=()
    filter=()
    ;;
  tsan)
    sanitize=thread
    build="${HEAPPROF_TSAN_BUILD_DIR:-$root/build-tsan}"
    # Only what the threaded tests run.
    targets=(--target heapprof_v8_tests heapprof)
    filter=(-R '^(v8:|cli: replicas)')
    ;;
  *)
    echo "usage: tools/test_sanitized.sh asan|tsan [ctest args...]" >&2
    exit 2
    ;;
esac

HEAPPROF_BUILD_DIR="$build" HEAPPROF_CMAKE_ARGS="-DHEAPPROF_SANITIZE=$sanitize" \
  "$root/tools/build.sh" "${targets[@]}"
cd "$build"
echo "== $mode: ctest in $build" >&2
ctest --output-on-failure -j "${HEAPPROF_JOBS:-2}" "${filter[@]}" "$@"
