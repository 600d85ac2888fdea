#!/usr/bin/env bash
# The V8-free core without libnode: configures a second tree with V8 hidden
# (CMAKE_DISABLE_FIND_PACKAGE_V8), checks that the configuration says so and
# defines no V8 target, builds only heapprof_core and the unit tests, checks
# that nothing there links libnode, and runs them.
#   no_v8_test.sh <source dir> <build dir>
# With ccache installed the tree compiles through it with the settings of
# tools/build.sh, so a build dir beside the main tree (the same depth below
# the sources) reuses the main tree's objects: only configuring, linking and
# the tests cost time.
set -euo pipefail
src="$1" build="$2"
fail() { echo "FAIL: $*"; exit 1; }
start=$SECONDS
mkdir -p "$build"
log="$build/no_v8_test"  # its logs: .configure.log, .build.log

args=(-S "$src" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_DISABLE_FIND_PACKAGE_V8=ON)
if command -v ccache >/dev/null; then
  args+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  export CCACHE_BASEDIR="$src" CCACHE_NOHASHDIR=1
fi
cmake "${args[@]}" >"$log.configure.log" 2>&1 || { cat "$log.configure.log"; fail "the configuration without V8 failed"; }
grep -q "V8 (libnode 108) not found: building only the V8-free libraries" "$log.configure.log" ||
  { cat "$log.configure.log"; fail "the configuration did not run without V8"; }
targets="$(cmake --build "$build" --target help)"
for t in heapprof_v8 heapprof_serve heapprof heapprof_v8_tests; do
  if grep -qE "(^|[ .])$t\$" <<<"$targets"; then fail "the V8-free configuration still defines $t"; fi
done
configured=$SECONDS

cmake --build "$build" -j "${HEAPPROF_JOBS:-2}" --target heapprof_core heapprof_unit_tests >"$log.build.log" 2>&1 ||
  { tail -n 60 "$log.build.log"; fail "the V8-free core or its unit tests did not build"; }
built=$SECONDS
if ldd "$build/tests/heapprof_unit_tests" | grep -q libnode; then fail "the unit tests link libnode"; fi

"$build/tests/heapprof_unit_tests" --warn NoTests || fail "the unit tests failed in the V8-free build"
echo "the V8-free core builds and passes its unit tests without V8" \
     "(configure $((configured - start)) s, build $((built - configured)) s, tests $((SECONDS - built)) s)"
