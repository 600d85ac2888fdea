#include "unit/test_dirs.h"

namespace heapprof::testing {

std::filesystem::path SourceDir() { return HEAPPROF_SOURCE_DIR; }
std::filesystem::path BinaryDir() { return HEAPPROF_BINARY_DIR; }

}  // namespace heapprof::testing
