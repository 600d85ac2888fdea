#!/usr/bin/env bash
# Installs dependencies (tools/bootstrap.sh), then configures and builds
# heapprof incrementally in build/ (or $HEAPPROF_BUILD_DIR).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${HEAPPROF_BUILD_DIR:-$root/build}"
"$root/tools/bootstrap.sh"
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
fi
cmake --build "$build" -j "${HEAPPROF_JOBS:-2}" "$@" | grep -vE '^\[ *[0-9]+%\] (Building|Linking|Built|Generating|Running)' || true
test "${PIPESTATUS[0]}" -eq 0
