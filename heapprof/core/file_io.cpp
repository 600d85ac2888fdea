#include "heapprof/file_io.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>
#include <utility>

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

std::string DirectoryOf(const std::string& path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string BaseNameOf(const std::string& path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
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

Result<std::string> ReadFileBytes(const std::string& path) {
  if (path.empty()) return Error(ErrorCode::kInvalidArgument, "no file name given");
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
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
  std::string temp = fmt::format("{}/.{}.tmp.XXXXXX", dir, BaseNameOf(path));
  int fd = ::mkostemp(temp.data(), O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    return Error(CodeFor(err), fmt::format("cannot create a file in '{}' to write '{}': {}", dir, path, ErrnoText(err)));
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

}  // namespace heapprof
