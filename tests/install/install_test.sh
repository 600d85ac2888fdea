#!/usr/bin/env bash
# Installs heapprof into a temporary prefix, then builds and runs a project
# outside the tree against it: once with find_package(heapprof CONFIG), once
# with the pkg-config file; then a collector-only embedder with
# find_package(heapprof COMPONENTS v8) and npm, esbuild, OpenSSL and cpptoml
# hidden. Usage: install_test.sh BUILD_DIR SOURCE_DIR WORK_DIR
set -euo pipefail
build=$1 src=$2 work=$3
rm -rf "$work"
mkdir -p "$work"
prefix="$work/prefix"

cmake --install "$build" --prefix "$prefix" > "$work/install.log"
for f in include/heapprof/v8/session.h include/heapprof/core/query.h include/heapprof/testing/matchers.h \
         bin/heapprof lib/libheapprof_core.a lib/libheapprof_v8.a lib/libheapprof_proto.a \
         lib/libheapprof_testing.a lib/cmake/heapprof/heapprofConfig.cmake lib/cmake/heapprof/FindV8.cmake \
         lib/pkgconfig/heapprof.pc; do
  [[ -e "$prefix/$f" ]] || { echo "not installed: $f"; exit 1; }
done
"$prefix/bin/heapprof" --help > /dev/null

# CMake package.
cmake -S "$src/tests/install" -B "$work/cmake-build" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release > "$work/configure.log"
cmake --build "$work/cmake-build" -j2 > "$work/build.log"
out=$("$work/cmake-build/heapprof_consumer")
echo "find_package: $out"
[[ "$out" == "alloc_space total: "* ]]

# pkg-config.
flags=$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags --libs heapprof)
c++ -o "$work/pc-consumer" "$src/tests/install/consumer.cpp" $flags
out=$("$work/pc-consumer")
echo "pkg-config: $out"
[[ "$out" == "alloc_space total: "* ]]

# The collector alone: find_package(heapprof COMPONENTS v8) configures and
# builds with npm, node and esbuild off the PATH and OpenSSL and cpptoml not
# findable; the same with COMPONENTS runtime must fail (so the hiding bites).
bin="$work/bin"
mkdir -p "$bin"
for dir in /usr/local/bin /usr/bin /bin; do
  for tool in "$dir"/*; do
    name=$(basename "$tool")
    case "$name" in npm | npx | node | nodejs | esbuild | corepack) continue ;; esac
    [[ -e "$bin/$name" ]] || ln -s "$tool" "$bin/$name"
  done
done
hide=(-DCMAKE_DISABLE_FIND_PACKAGE_OpenSSL=ON -DCMAKE_DISABLE_FIND_PACKAGE_cpptoml=ON)
if PATH="$bin" command -v npm node esbuild >/dev/null 2>&1; then echo "npm, node or esbuild still on the PATH"; exit 1; fi
PATH="$bin" cmake -S "$src/tests/install/collector" -B "$work/collector-build" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_BUILD_TYPE=Release "${hide[@]}" > "$work/collector-configure.log" 2>&1 ||
  { cat "$work/collector-configure.log"; echo "the collector-only consumer did not configure"; exit 1; }
PATH="$bin" cmake --build "$work/collector-build" -j2 > "$work/collector-build.log" 2>&1 ||
  { tail -n 40 "$work/collector-build.log"; echo "the collector-only consumer did not build"; exit 1; }
out=$("$work/collector-build/heapprof_collector_consumer")
echo "COMPONENTS v8 without npm/esbuild/OpenSSL/cpptoml: $out"
[[ "$out" == "alloc_space total: "* ]]
mkdir -p "$work/runtime-src"
printf 'cmake_minimum_required(VERSION 3.25)\nproject(r LANGUAGES CXX)\nfind_package(heapprof CONFIG REQUIRED COMPONENTS runtime)\n' \
  > "$work/runtime-src/CMakeLists.txt"
if PATH="$bin" cmake -S "$work/runtime-src" -B "$work/runtime-build" -DCMAKE_PREFIX_PATH="$prefix" "${hide[@]}" \
     > "$work/runtime-configure.log" 2>&1; then
  echo "COMPONENTS runtime configured without OpenSSL: the hiding does not work"; exit 1
fi
grep -q OpenSSL "$work/runtime-configure.log" || { cat "$work/runtime-configure.log"; echo "COMPONENTS runtime failed, not for OpenSSL"; exit 1; }
echo "COMPONENTS runtime without OpenSSL: refused (it needs OpenSSL)"
