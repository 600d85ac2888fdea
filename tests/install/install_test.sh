#!/usr/bin/env bash
# Installs heapprof into a temporary prefix, then builds and runs a project
# outside the tree against it: once with find_package(heapprof CONFIG), once
# with the pkg-config file. Usage: install_test.sh BUILD_DIR SOURCE_DIR WORK_DIR
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
