// Whole-file reads and atomic writes: no reader ever sees a half-written file.
#pragma once

#include <string>
#include <string_view>

#include "heapprof/status.h"

namespace heapprof {

Result<std::string> ReadFileBytes(const std::string& path);
// Writes to a temporary file beside `path`, then renames it over `path`.
// On any failure (open, write, fsync, close, rename) the temporary file is
// removed and `path` is untouched. An existing `path` that is not a regular
// file (/dev/stdout, a FIFO, /dev/full) is written into directly instead;
// a symbolic link is followed, so the link stays and its target is replaced.
Status WriteFileAtomic(const std::string& path, std::string_view bytes);

}  // namespace heapprof
