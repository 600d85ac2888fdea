#!/usr/bin/env bash
# Installs dependencies (tools/bootstrap.sh), then configures and builds
# heapprof incrementally in build/ (or $HEAPPROF_BUILD_DIR). Extra configure
# arguments in $HEAPPROF_CMAKE_ARGS (e.g. -DHEAPPROF_SANITIZE=thread) are
# applied on every run. Arguments are passed to cmake --build (e.g. --target x).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${HEAPPROF_BUILD_DIR:-$root/build}"
"$root/tools/bootstrap.sh"
# ccache when it is installed (it is not required): with paths taken relative
# to the checkout, a second tree of the same sources (tests/build/no_v8_test.sh)
# reuses this tree's objects instead of compiling them again.
if [ -z "${CMAKE_CXX_COMPILER_LAUNCHER:-}" ] && command -v ccache >/dev/null; then
  export CMAKE_CXX_COMPILER_LAUNCHER=ccache
fi
if [ "${CMAKE_CXX_COMPILER_LAUNCHER:-}" = ccache ]; then
  export CCACHE_BASEDIR="$root" CCACHE_NOHASHDIR=1
fi
if [ ! -f "$build/CMakeCache.txt" ] || [ -n "${HEAPPROF_CMAKE_ARGS:-}" ]; then
  # shellcheck disable=SC2086  # the arguments are a word list
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo ${HEAPPROF_CMAKE_ARGS:-} >/dev/null
fi
# Quiet progress lines; keep warnings and errors. The build's own status decides.
set +e
cmake --build "$build" -j "${HEAPPROF_JOBS:-2}" "$@" 2>&1 |
  grep -vE '^\[ *[0-9]+%\] (Building|Linking|Built|Generating|Running)'
status=${PIPESTATUS[0]}
set -e
if [ "$status" -ne 0 ]; then
  echo "build failed (exit $status)" >&2
  exit "$status"
fi
