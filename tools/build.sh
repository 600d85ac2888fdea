#!/usr/bin/env bash
# Installs dependencies (tools/bootstrap.sh), then configures and builds
# heapprof incrementally in build/ (or $HEAPPROF_BUILD_DIR). Extra configure
# arguments in $HEAPPROF_CMAKE_ARGS (e.g. -DHEAPPROF_SANITIZE=thread) are
# applied on every run. Arguments are passed to cmake --build (e.g. --target x).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${HEAPPROF_BUILD_DIR:-$root/build}"
"$root/tools/bootstrap.sh"
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
