// Checks every subcommand makes on its output files before doing any work:
// the file can be written, and it is none of the command's inputs.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "heapprof/core/file_io.h"  // FallbackDirs, WriteOrFallBack
#include "heapprof/core/status.h"

namespace heapprof::cli {

// kInvalidArgument when an output is one of `inputs` or another output (the
// same file by device and inode, whatever the names or links), or when its
// folder is missing, not a folder, or cannot take a new file (probed by
// creating and removing one). Empty names are skipped. An existing output
// that is not a regular file (/dev/stdout, a FIFO) is checked for writing only.
Status CheckOutputs(const std::vector<std::string>& inputs, const std::vector<std::string>& outputs);

// kResourceExhausted when the filesystem of `output` (a regular file or one
// to be made) has less than `needed_bytes` free for this user; outputs that
// are devices or FIFOs are not checked.
Status CheckFreeSpace(const std::string& output, uint64_t needed_bytes);
// A run's profile size as far as it can be told before the run: a bound on
// the live samples (heap limit / interval) at a generous size each.
uint64_t EstimatedProfileBytes(uint64_t heap_limit_bytes, uint64_t interval_bytes);

// kInvalidArgument when --fallback-dir is given and is not a folder that can take a new file.
Status CheckFallbackDir(const std::string& fallback_dir);

// WriteOrFallBack, then says what happened on stderr as `command`: where the output
// went instead, or that it could not be written anywhere. True when it is at `path`.
bool DeliverReported(const std::string& command, const std::string& what, const std::string& path,
                     const std::vector<std::string>& fallback_dirs,
                     const std::function<Status(const std::string&)>& write, std::string* written);

}  // namespace heapprof::cli
