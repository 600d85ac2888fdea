// Whole-file reads and atomic writes: no reader ever sees a half-written file.
#pragma once

#include <string>
#include <string_view>

#include "heapprof/core/status.h"

namespace heapprof {

// Files larger than this are refused before they are read (a profile is far smaller).
inline constexpr size_t kMaxInputFileBytes = size_t{1} << 30;  // 1 GiB

struct ReadOptions {
  // Larger files (or pipes that deliver more) are refused with kResourceExhausted.
  size_t max_bytes = kMaxInputFileBytes;
  // Refuse FIFOs too, for files named by what was read (a script's
  // sourceMappingURL) rather than by the user; opened without blocking.
  bool regular_only = false;
};

// Reads a whole file. Directories, devices (/dev/zero) and sockets are
// refused; a FIFO or pipe the user names is read, up to `max_bytes`.
Result<std::string> ReadFileBytes(const std::string& path, const ReadOptions& options = {});
// Writes to a temporary file beside `path`, then renames it over `path`.
// On any failure (open, write, fsync, close, rename) the temporary file is
// removed and `path` is untouched. An existing `path` that is not a regular
// file (/dev/stdout, a FIFO, /dev/full) is written into directly instead;
// a symbolic link is followed, so the link stays and its target is replaced.
Status WriteFileAtomic(const std::string& path, std::string_view bytes);

}  // namespace heapprof
