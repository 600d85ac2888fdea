// Whole-file reads and atomic writes: no reader ever sees a half-written file.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

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

// The file of one window of a rotating series (--continuous, near-limit
// captures): "<dir>/<name>-<start time in ns>.pb.gz", the name made file-safe
// (text.h's FileSafeName). Every writer of such series names files here.
std::string WindowFilePath(std::string_view dir, std::string_view name, int64_t time_nanos);

// Where an output goes when it cannot be written where it was named: the
// folder the user gave (--fallback-dir; "" for none), then the system's
// temporary folder ($TMPDIR, else /tmp).
std::vector<std::string> FallbackDirs(const std::string& fallback_dir);

// What WriteOrFallBack did: the file written ("" when none could be), and
// the failures on the way (the named path's first).
struct Delivery {
  std::string written;
  std::vector<std::string> failures;
  bool at_named_path() const { return failures.empty() && !written.empty(); }
  // "" at the named path; else "; written to X instead" or "; no fallback folder took it either".
  std::string Where() const;
};
// Writes `path` with `write`; when that fails (a full disk, EFBIG, EIO), the
// same file name in each fallback folder in turn (never over an existing
// file: x.pb.gz, then x-1.pb.gz...), so the output that was made is not lost.
Delivery WriteOrFallBack(const std::string& path, const std::vector<std::string>& fallback_dirs,
                         const std::function<Status(const std::string&)>& write);

}  // namespace heapprof
