#include "heapprof/core/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>
#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <utility>

#include "heapprof/core/text.h"

namespace heapprof {
namespace {

std::string ErrnoText(int err) { return std::strerror(err); }

ErrorCode CodeFor(int err) { return err == ENOENT || err == ENOTDIR ? ErrorCode::kNotFound : ErrorCode::kIo; }

// Closes a descriptor on scope exit unless released.
class FdCloser {
 public:
  explicit FdCloser(int fd) : fd_(fd) {}
  ~FdCloser() {
    if (fd_ >= 0) ::close(fd_);
  }
  FdCloser(const FdCloser&) = delete;
  FdCloser& operator=(const FdCloser&) = delete;
  int release() { return std::exchange(fd_, -1); }

 private:
  int fd_;
};

// "1 GiB", "256 MiB", or bytes for limits that are not whole MiB.
std::string FormatLimit(size_t bytes) {
  if (bytes >= (size_t{1} << 30) && bytes % (size_t{1} << 30) == 0) return fmt::format("{} GiB", bytes >> 30);
  if (bytes >= (size_t{1} << 20) && bytes % (size_t{1} << 20) == 0) return fmt::format("{} MiB", bytes >> 20);
  return fmt::format("{} B", bytes);
}

std::string DirectoryOf(const std::string& path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// Writes all of `bytes` to fd, retrying short writes; false with errno set on failure.
bool WriteAll(int fd, std::string_view bytes) {
  size_t written = 0;
  while (written < bytes.size()) {
    ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    written += static_cast<size_t>(n);
  }
  return true;
}

// An existing file that is not a regular file: no temporary file, no rename.
Status WriteInto(const std::string& path, std::string_view bytes) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    return Error(CodeFor(err), fmt::format("cannot open '{}': {}", path, ErrnoText(err)));
  }
  FdCloser closer(fd);
  auto fail = [&](const char* what) {
    int err = errno;
    return Error(ErrorCode::kIo, fmt::format("cannot write '{}' ({} failed: {})", path, what, ErrnoText(err)));
  };
  if (!WriteAll(fd, bytes)) return fail("write");
  if (::close(closer.release()) != 0) return fail("close");
  return Status::Ok();
}

}  // namespace

Result<std::string> ReadFileBytes(const std::string& path, const ReadOptions& options) {
  if (path.empty()) return Error(ErrorCode::kInvalidArgument, "no file name given");
  // Only a FIFO the user named may block in open(); anything else is opened
  // without blocking and its type checked on the descriptor, not the name.
  struct stat named {};
  bool user_fifo = !options.regular_only && ::stat(path.c_str(), &named) == 0 && S_ISFIFO(named.st_mode);
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | (user_fifo ? 0 : O_NONBLOCK));
  if (fd < 0) {
    int err = errno;
    return Error(CodeFor(err), fmt::format("cannot open '{}': {}", path, ErrnoText(err)));
  }
  FdCloser closer(fd);
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    return Error(ErrorCode::kIo, fmt::format("cannot stat '{}': {}", path, ErrnoText(err)));
  }
  if (S_ISDIR(st.st_mode)) return Error(ErrorCode::kInvalidArgument, fmt::format("'{}' is a directory", path));
  const bool pipe = S_ISFIFO(st.st_mode);
  if (!S_ISREG(st.st_mode) && !(pipe && !options.regular_only)) {
    const char* kind = pipe                                         ? "a FIFO"
                       : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device"
                       : S_ISSOCK(st.st_mode)                       ? "a socket"
                                                                    : "not a regular file";
    return Error(ErrorCode::kInvalidArgument, fmt::format("'{}' is {}, not a regular file", path, kind));
  }
  if (!user_fifo) {  // a regular file never blocks; drop O_NONBLOCK for the reads
    int flags = ::fcntl(fd, F_GETFL);
    if (flags >= 0) (void)::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  }
  auto too_large = [&] {
    return Error(ErrorCode::kResourceExhausted,
                 fmt::format("'{}' is larger than the {} limit for a file heapprof reads", path,
                             FormatLimit(options.max_bytes)));
  };
  if (S_ISREG(st.st_mode) && static_cast<uint64_t>(st.st_size) > options.max_bytes) return too_large();

  std::string bytes;
  if (S_ISREG(st.st_mode) && st.st_size > 0) bytes.reserve(static_cast<size_t>(st.st_size));
  char buffer[1 << 16];
  for (;;) {
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      return Error(ErrorCode::kIo, fmt::format("cannot read '{}': {}", path, ErrnoText(err)));
    }
    if (n == 0) break;
    // A file that grows while read, or a pipe that never ends, stops at the limit.
    if (static_cast<size_t>(n) > options.max_bytes - bytes.size()) return too_large();
    bytes.append(buffer, static_cast<size_t>(n));
  }
  return bytes;
}

Status WriteFileAtomic(const std::string& path, std::string_view bytes) {
  if (path.empty()) return Error(ErrorCode::kInvalidArgument, "no file name given");
  if (path.back() == '/') return Error(ErrorCode::kInvalidArgument, fmt::format("'{}' names a directory", path));
  struct stat link {};
  if (::lstat(path.c_str(), &link) == 0 && S_ISLNK(link.st_mode)) {
    // Replace what the link points to, not the link (/dev/stdout -> /proc/self/fd/1 -> a file).
    if (char* resolved = ::realpath(path.c_str(), nullptr)) {
      std::string real(resolved);
      std::free(resolved);
      return WriteFileAtomic(real, bytes);
    }
  }
  struct stat target {};
  bool target_exists = ::stat(path.c_str(), &target) == 0;
  if (target_exists && S_ISDIR(target.st_mode)) {
    return Error(ErrorCode::kInvalidArgument, fmt::format("'{}' is a directory", path));
  }

  if (target_exists && !S_ISREG(target.st_mode)) {
    // A device or a pipe (/dev/stdout, /dev/full, a FIFO): write into it
    // directly; replacing it with a renamed regular file would destroy it.
    return WriteInto(path, bytes);
  }

  const std::string dir = DirectoryOf(path);
  // The temporary file sits beside the target so that rename() stays on one filesystem.
  std::string temp = fmt::format("{}/.{}.tmp.XXXXXX", dir, internal::BaseName(path));
  int fd = ::mkostemp(temp.data(), O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    return Error(CodeFor(err),
                 fmt::format("cannot create a file in '{}' to write '{}': {}", dir, path, ErrnoText(err)));
  }
  FdCloser closer(fd);
  auto fail = [&](const char* what) {
    int err = errno;
    ::unlink(temp.c_str());
    return Error(ErrorCode::kIo, fmt::format("cannot write '{}' ({} failed: {})", path, what, ErrnoText(err)));
  };

  // mkstemp makes the file 0600; give it the mode the replaced file had, or 0644.
  mode_t mode = target_exists ? (target.st_mode & 07777) : 0644;
  if (::fchmod(fd, mode) != 0) return fail("chmod");
  if (!WriteAll(fd, bytes)) return fail("write");
  if (::fsync(fd) != 0) return fail("fsync");
  if (::close(closer.release()) != 0) return fail("close");
  if (::rename(temp.c_str(), path.c_str()) != 0) return fail("rename");

  // Make the rename itself durable; failure here does not undo a complete write.
  int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    (void)::fsync(dir_fd);
    ::close(dir_fd);
  }
  return Status::Ok();
}

std::string Delivery::Where() const {
  if (at_named_path()) return "";
  return written.empty() ? "; no fallback folder took it either" : "; written to " + written + " instead";
}

std::vector<std::string> FallbackDirs(const std::string& fallback_dir) {
  std::vector<std::string> dirs;
  if (!fallback_dir.empty()) dirs.push_back(fallback_dir);
  std::error_code ec;
  std::filesystem::path temp = std::filesystem::temp_directory_path(ec);
  if (!ec && !temp.empty() && std::find(dirs.begin(), dirs.end(), temp.string()) == dirs.end()) {
    dirs.push_back(temp.string());
  }
  return dirs;
}

Delivery WriteOrFallBack(const std::string& path, const std::vector<std::string>& fallback_dirs,
                         const std::function<Status(const std::string&)>& write) {
  Delivery d;
  Status first = write(path);
  if (first.ok()) {
    d.written = path;
    return d;
  }
  d.failures.push_back(first.message());
  std::string name = std::filesystem::path(path).filename().string();
  if (name.empty() || name == "." || name == "..") name = "heapprof-output";
  for (const std::string& dir : fallback_dirs) {
    // A new name in the folder: never replace a file someone else left there.
    std::filesystem::path candidate = std::filesystem::path(dir) / name;
    std::error_code ec;
    for (int i = 1; std::filesystem::exists(candidate, ec) && i < 1000; ++i) {
      std::filesystem::path stem = std::filesystem::path(name).stem(), ext = std::filesystem::path(name).extension();
      if (ext == ".gz" && stem.has_extension()) {  // x.pb.gz -> x-1.pb.gz
        ext = stem.extension().string() + ext.string();
        stem = stem.stem();
      }
      candidate = std::filesystem::path(dir) / fmt::format("{}-{}{}", stem.string(), i, ext.string());
    }
    Status s = write(candidate.string());
    if (s.ok()) {
      d.written = candidate.string();
      return d;
    }
    d.failures.push_back(s.message());
  }
  return d;
}

std::string WindowFilePath(std::string_view dir, std::string_view name, int64_t time_nanos) {
  return fmt::format("{}/{}-{}.pb.gz", dir, internal::FileSafeName(std::string(name)), time_nanos);
}

}  // namespace heapprof
