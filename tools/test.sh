#!/usr/bin/env bash
# Sets up everything, builds, and runs every test suite with CTest.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${HEAPPROF_BUILD_DIR:-$root/build}"
"$root/tools/build.sh"
cd "$build"
ctest --output-on-failure -j "${HEAPPROF_JOBS:-2}" "$@"
