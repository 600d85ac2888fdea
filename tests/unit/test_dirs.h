// Where the unit tests read their data and write scratch files. The paths are
// compiled into one file (test_dirs.cpp), so every other unit test compiles
// the same in any build tree and a second tree reuses it from ccache
// (tests/build/no_v8_test.sh).
#pragma once

#include <filesystem>

namespace heapprof::testing {

// The repository's root.
std::filesystem::path SourceDir();
// The build tree (CMake's top-level binary directory).
std::filesystem::path BinaryDir();

}  // namespace heapprof::testing
