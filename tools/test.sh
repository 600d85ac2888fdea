#!/usr/bin/env bash
# Sets up everything, builds, and runs every test suite with CTest; then the
# same suite under ASan + LeakSanitizer + UBSan in build-asan/
# (tools/test_sanitized.sh asan; HEAPPROF_SANITIZERS=0 skips that part).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${HEAPPROF_BUILD_DIR:-$root/build}"
"$root/tools/build.sh"
cd "$build"
ctest --output-on-failure -j "${HEAPPROF_JOBS:-2}" "$@"
if [ "${HEAPPROF_SANITIZERS:-1}" != 0 ]; then
  "$root/tools/test_sanitized.sh" asan "$@"
fi
