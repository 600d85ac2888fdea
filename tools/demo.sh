#!/usr/bin/env bash
# Sets up everything, builds, and profiles the bundled worker that leaks into
# a "disabled" metrics registry. Writes prometheus-leak.pb.gz and prints the
# top functions by in-use and allocated bytes.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${HEAPPROF_BUILD_DIR:-$root/build}"
"$root/tools/build.sh" --target heapprof
exec "$build/heapprof" run "$root/examples/workers/prometheus-leak.js" -o prometheus-leak.pb.gz "$@"
