// Checks every subcommand makes on its output files before doing any work:
// the file can be written, and it is none of the command's inputs.
#pragma once

#include <string>
#include <vector>

#include "heapprof/status.h"

namespace heapprof::cli {

// kInvalidArgument when an output is one of `inputs` or another output (the
// same file by device and inode, whatever the names or links), or when its
// folder is missing, not a folder, or cannot take a new file (probed by
// creating and removing one). Empty names are skipped. An existing output
// that is not a regular file (/dev/stdout, a FIFO) is checked for writing only.
Status CheckOutputs(const std::vector<std::string>& inputs, const std::vector<std::string>& outputs);

}  // namespace heapprof::cli
