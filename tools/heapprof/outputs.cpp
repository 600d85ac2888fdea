#include "tools/heapprof/outputs.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <fmt/format.h>
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "heapprof/core/report.h"

namespace heapprof::cli {
namespace {

namespace fs = std::filesystem;

bool SameFile(const struct stat& a, const struct stat& b) { return a.st_dev == b.st_dev && a.st_ino == b.st_ino; }

Status Refuse(const std::string& output, const std::string& why) {
  return Error(ErrorCode::kInvalidArgument, fmt::format("cannot write {}: {}", output, why));
}

// Whether a new file can be made in `dir`: EACCES, EROFS and the like show only when trying.
Status ProbeFolder(const std::string& output, const fs::path& dir) {
  std::string probe = ((dir.empty() ? fs::path(".") : dir) / ".heapprof-probe.XXXXXX").string();
  int fd = ::mkostemp(probe.data(), O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    return Refuse(
        output, fmt::format("cannot create a file in '{}': {}", dir.empty() ? "." : dir.string(), std::strerror(err)));
  }
  ::close(fd);
  ::unlink(probe.c_str());
  return Status::Ok();
}

}  // namespace

Status CheckOutputs(const std::vector<std::string>& inputs, const std::vector<std::string>& outputs) {
  std::vector<std::pair<std::string, struct stat>> existing;  // inputs, then outputs already checked
  for (const std::string& input : inputs) {
    struct stat st {};
    if (!input.empty() && ::stat(input.c_str(), &st) == 0) existing.emplace_back("the input " + input, st);
  }
  std::vector<fs::path> planned;  // outputs by real path, for those that do not exist yet
  for (const std::string& output : outputs) {
    if (output.empty()) continue;
    std::error_code ec;
    fs::path real = fs::weakly_canonical(fs::absolute(output, ec), ec);
    if (!ec && std::find(planned.begin(), planned.end(), real) != planned.end()) {
      return Refuse(output, "it is another output too (choose another file name)");
    }
    planned.push_back(real);
    struct stat st {};
    if (::stat(output.c_str(), &st) == 0) {
      for (const auto& [what, other] : existing) {
        if (SameFile(st, other) && S_ISREG(st.st_mode)) {
          return Refuse(output, fmt::format("it is {}; heapprof never overwrites what it reads (choose "
                                            "another file name)",
                                            what));
        }
      }
      existing.emplace_back("another output too", st);
      if (!S_ISREG(st.st_mode)) {
        if (S_ISDIR(st.st_mode)) return Refuse(output, "it is a directory");
        if (::access(output.c_str(), W_OK) != 0) return Refuse(output, std::strerror(errno));
        continue;  // a device or FIFO is written into, not replaced
      }
    }
    fs::path dir = fs::path(output).parent_path();
    if (!dir.empty() && !fs::is_directory(dir, ec)) {
      return Refuse(output,
                    fs::exists(dir, ec) ? dir.string() + " is not a directory" : "no such directory " + dir.string());
    }
    HEAPPROF_RETURN_IF_ERROR(ProbeFolder(output, dir));
  }
  return Status::Ok();
}

Status CheckFreeSpace(const std::string& output, uint64_t needed_bytes) {
  if (output.empty()) return Status::Ok();
  struct stat st {};
  if (::stat(output.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) return Status::Ok();
  fs::path dir = fs::path(output).parent_path();
  if (dir.empty()) dir = ".";
  struct statvfs vfs {};
  if (::statvfs(dir.c_str(), &vfs) != 0) return Status::Ok();  // CheckOutputs has told what is wrong
  uint64_t free_bytes = static_cast<uint64_t>(vfs.f_bavail) * vfs.f_frsize;
  // The old file's blocks come back when the new one is renamed over it, but
  // both exist until then.
  if (free_bytes >= needed_bytes) return Status::Ok();
  return Error(ErrorCode::kResourceExhausted,
               fmt::format("cannot write {}: its filesystem has {} free and the profile may take up to about {} "
                           "(free some space or choose another -o)",
                           output, FormatValue(static_cast<int64_t>(free_bytes), "bytes"),
                           FormatValue(static_cast<int64_t>(needed_bytes), "bytes")));
}

uint64_t EstimatedProfileBytes(uint64_t heap_limit_bytes, uint64_t interval_bytes) {
  uint64_t live_samples = heap_limit_bytes / std::max<uint64_t>(interval_bytes, 1);
  return (64u << 10) + std::min<uint64_t>(live_samples, uint64_t{1} << 24) * 64;
}

Status CheckFallbackDir(const std::string& fallback_dir) {
  if (fallback_dir.empty()) return Status::Ok();
  std::error_code ec;
  if (!fs::is_directory(fallback_dir, ec)) {
    return Error(ErrorCode::kInvalidArgument,
                 fmt::format("--fallback-dir needs an existing folder, not {}", fallback_dir));
  }
  return ProbeFolder("--fallback-dir " + fallback_dir, fallback_dir);
}

bool DeliverReported(const std::string& command, const std::string& what, const std::string& path,
                     const std::vector<std::string>& fallback_dirs,
                     const std::function<Status(const std::string&)>& write, std::string* written) {
  Delivery d = WriteOrFallBack(path, fallback_dirs, write);
  *written = d.written;
  if (d.at_named_path()) return true;
  if (!d.written.empty()) {
    fmt::print(stderr, "heapprof {}: {}\nheapprof {}: the {} is written to {} instead\n", command, d.failures.front(),
               command, what, d.written);
  } else {
    std::string all;
    for (const std::string& f : d.failures) all += "\n  " + f;
    fmt::print(stderr, "heapprof {}: the {} could not be written anywhere:{}\n", command, what, all);
  }
  std::fflush(stderr);
  return false;
}

}  // namespace heapprof::cli
