// Whole-file reads and atomic writes, including their failure paths.
#include <dirent.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <csignal>
#include <cstdlib>
#include <string>
#include <vector>

#include "heapprof/core/file_io.h"
#include "unit/test_dirs.h"

using namespace heapprof;

namespace {

// A fresh directory under the build tree, removed (with its files) at the end.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (heapprof::testing::BinaryDir() / "file_io_test.XXXXXX").string();
    REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    path_ = pattern;
  }
  ~TempDir() {
    ::chmod(path_.c_str(), 0755);
    for (const std::string& name : Entries()) ::unlink((path_ + "/" + name).c_str());
    ::rmdir(path_.c_str());
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::vector<std::string> Entries() const {
    std::vector<std::string> names;
    if (DIR* d = ::opendir(path_.c_str())) {
      while (dirent* e = ::readdir(d)) {
        std::string name = e->d_name;
        if (name != "." && name != "..") names.push_back(name);
      }
      ::closedir(d);
    }
    return names;
  }

 private:
  std::string path_;
};

}  // namespace

TEST_CASE("WriteFileAtomic writes, replaces, and leaves no temporary file") {
  TempDir dir;
  std::string path = dir.path() + "/profile.pb.gz";
  std::string binary("a\0b\xff", 4);
  REQUIRE(WriteFileAtomic(path, binary).ok());
  Result<std::string> back = ReadFileBytes(path);
  REQUIRE(back.ok());
  CHECK(*back == binary);

  REQUIRE(WriteFileAtomic(path, "second").ok());
  CHECK(ReadFileBytes(path).value() == "second");
  CHECK(dir.Entries() == std::vector<std::string>{"profile.pb.gz"});

  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0644);  // not mkstemp's 0600

  REQUIRE(WriteFileAtomic(path, "").ok());
  CHECK(ReadFileBytes(path)->empty());
}

TEST_CASE("WriteFileAtomic keeps the mode of the file it replaces") {
  TempDir dir;
  std::string path = dir.path() + "/kept";
  REQUIRE(WriteFileAtomic(path, "one").ok());
  REQUIRE(::chmod(path.c_str(), 0600) == 0);
  REQUIRE(WriteFileAtomic(path, "two").ok());
  struct stat st {};
  REQUIRE(::stat(path.c_str(), &st) == 0);
  CHECK((st.st_mode & 0777) == 0600);
}

TEST_CASE("WriteFileAtomic reports missing and unwritable directories clearly") {
  TempDir dir;
  Status missing = WriteFileAtomic(dir.path() + "/no/such/dir/out.pb.gz", "x");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.code() == ErrorCode::kNotFound);
  CHECK_THAT(missing.message(),
             Catch::Matchers::Contains("no/such/dir") && Catch::Matchers::Contains("No such file or directory"));

  CHECK_FALSE(WriteFileAtomic(dir.path(), "x").ok());  // a directory is not a file
  CHECK_FALSE(WriteFileAtomic("", "x").ok());

  if (::geteuid() != 0) {  // root writes anywhere; the permission check needs a normal user
    REQUIRE(::chmod(dir.path().c_str(), 0555) == 0);
    Status denied = WriteFileAtomic(dir.path() + "/out.pb.gz", "x");
    REQUIRE_FALSE(denied.ok());
    CHECK(denied.code() == ErrorCode::kIo);
    CHECK_THAT(denied.message(), Catch::Matchers::Contains("Permission denied"));
    ::chmod(dir.path().c_str(), 0755);
  }
  CHECK(dir.Entries().empty());
}

TEST_CASE("WriteFileAtomic leaves the old file intact when the write fails") {
  TempDir dir;
  std::string path = dir.path() + "/old";
  REQUIRE(WriteFileAtomic(path, "old contents").ok());
  // A file-size limit makes write() fail with EFBIG after the temporary file exists.
  rlimit saved{};
  REQUIRE(::getrlimit(RLIMIT_FSIZE, &saved) == 0);
  auto previous_handler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit small = saved;
  small.rlim_cur = 1024;
  REQUIRE(::setrlimit(RLIMIT_FSIZE, &small) == 0);
  Status s = WriteFileAtomic(path, std::string(64 * 1024, 'n'));
  ::setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, previous_handler);
  REQUIRE_FALSE(s.ok());
  CHECK(s.code() == ErrorCode::kIo);
  CHECK_THAT(s.message(), Catch::Matchers::Contains("write failed"));
  CHECK(dir.Entries() == std::vector<std::string>{"old"});  // the temporary file is gone
  CHECK(ReadFileBytes(path).value() == "old contents");
}

TEST_CASE("ReadFileBytes reports missing files and directories clearly") {
  TempDir dir;
  Result<std::string> missing = ReadFileBytes(dir.path() + "/absent.pb.gz");
  REQUIRE_FALSE(missing.ok());
  CHECK(missing.status().code() == ErrorCode::kNotFound);
  CHECK_THAT(missing.status().message(),
             Catch::Matchers::Contains("absent.pb.gz") && Catch::Matchers::Contains("No such file or directory"));
  Result<std::string> is_dir = ReadFileBytes(dir.path());
  REQUIRE_FALSE(is_dir.ok());
  CHECK_THAT(is_dir.status().message(), Catch::Matchers::Contains("is a directory"));
  CHECK_FALSE(ReadFileBytes("").ok());
}

TEST_CASE("ReadFileBytes reads large files whole") {
  TempDir dir;
  std::string path = dir.path() + "/big";
  std::string big(3 * (1 << 20) + 17, 'x');
  for (size_t i = 0; i < big.size(); i += 4096) big[i] = static_cast<char>(i / 4096);
  REQUIRE(WriteFileAtomic(path, big).ok());
  Result<std::string> back = ReadFileBytes(path);
  REQUIRE(back.ok());
  CHECK(*back == big);
}

TEST_CASE("WriteFileAtomic reports a regular file used as a directory") {
  TempDir dir;
  std::string file = dir.path() + "/plain";
  REQUIRE(WriteFileAtomic(file, "x").ok());
  Status s = WriteFileAtomic(file + "/out.pb.gz", "profile");
  REQUIRE_FALSE(s.ok());
  CHECK_THAT(s.message(), Catch::Matchers::Contains("plain") && Catch::Matchers::Contains("Not a directory"));
  CHECK(dir.Entries() == std::vector<std::string>{"plain"});
  CHECK(ReadFileBytes(file).value() == "x");
}

TEST_CASE("WriteFileAtomic writes into devices instead of replacing them") {
  // /dev/full fails every write with ENOSPC: a full disk. The device must
  // stay a device (a rename over it would replace it with a regular file).
  struct stat before {};
  REQUIRE(::stat("/dev/full", &before) == 0);
  REQUIRE(S_ISCHR(before.st_mode));
  Status full = WriteFileAtomic("/dev/full", std::string(4096, 'p'));
  REQUIRE_FALSE(full.ok());
  CHECK(full.code() == ErrorCode::kIo);
  CHECK_THAT(full.message(),
             Catch::Matchers::Contains("/dev/full") && Catch::Matchers::Contains("No space left on device"));
  struct stat after {};
  REQUIRE(::stat("/dev/full", &after) == 0);
  CHECK(S_ISCHR(after.st_mode));
  CHECK(after.st_rdev == before.st_rdev);

  CHECK(WriteFileAtomic("/dev/null", "discarded").ok());
  struct stat null_after {};
  REQUIRE(::stat("/dev/null", &null_after) == 0);
  CHECK(S_ISCHR(null_after.st_mode));
}

TEST_CASE("WriteFileAtomic writes through a FIFO") {
  TempDir dir;
  std::string fifo = dir.path() + "/pipe";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  // O_RDWR keeps a reader open without blocking, so the write goes into the pipe buffer.
  int reader = ::open(fifo.c_str(), O_RDWR | O_NONBLOCK);
  REQUIRE(reader >= 0);
  REQUIRE(WriteFileAtomic(fifo, "through the pipe").ok());
  char buffer[64] = {};
  ssize_t n = ::read(reader, buffer, sizeof buffer);
  ::close(reader);
  CHECK(std::string(buffer, n > 0 ? static_cast<size_t>(n) : 0) == "through the pipe");
  struct stat st {};
  REQUIRE(::stat(fifo.c_str(), &st) == 0);
  CHECK(S_ISFIFO(st.st_mode));
  CHECK(dir.Entries() == std::vector<std::string>{"pipe"});
}

TEST_CASE("WriteFileAtomic replaces what a symbolic link points to and keeps the link") {
  TempDir dir;
  std::string target = dir.path() + "/target.pb.gz";
  std::string link = dir.path() + "/latest.pb.gz";
  REQUIRE(WriteFileAtomic(target, "old").ok());
  REQUIRE(::symlink("target.pb.gz", link.c_str()) == 0);
  REQUIRE(WriteFileAtomic(link, "new").ok());
  struct stat st {};
  REQUIRE(::lstat(link.c_str(), &st) == 0);
  CHECK(S_ISLNK(st.st_mode));
  CHECK(ReadFileBytes(target).value() == "new");
  auto entries = dir.Entries();
  std::sort(entries.begin(), entries.end());
  CHECK(entries == std::vector<std::string>{"latest.pb.gz", "target.pb.gz"});
}

namespace {

// Forks a writer that sends `bytes` into the FIFO at `path`, then exits.
pid_t WriteIntoFifo(const std::string& path, size_t bytes) {
  pid_t pid = ::fork();
  if (pid == 0) {
    int fd = ::open(path.c_str(), O_WRONLY);
    std::string chunk(4096, 'p');
    for (size_t sent = 0; fd >= 0 && sent < bytes; sent += chunk.size()) {
      if (::write(fd, chunk.data(), std::min(chunk.size(), bytes - sent)) < 0) break;
    }
    ::_exit(0);
  }
  return pid;
}

}  // namespace

TEST_CASE("ReadFileBytes refuses devices and, for files a script names, FIFOs without blocking") {
  TempDir dir;
  Result<std::string> zero = ReadFileBytes("/dev/zero");  // read to EOF it would never end
  REQUIRE_FALSE(zero.ok());
  CHECK(zero.status().code() == ErrorCode::kInvalidArgument);
  CHECK_THAT(zero.status().message(), Catch::Matchers::Contains("'/dev/zero' is a device, not a regular file"));

  const std::string fifo = dir.path() + "/fifo";
  REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  ::alarm(20);  // a blocking open() would hang the test: let it die instead
  Result<std::string> named = ReadFileBytes(fifo, {.regular_only = true});
  ::alarm(0);
  REQUIRE_FALSE(named.ok());
  CHECK_THAT(named.status().message(), Catch::Matchers::Contains("is a FIFO, not a regular file"));

  // A FIFO the user names is read like a file, up to the limit.
  pid_t writer = WriteIntoFifo(fifo, 10000);
  Result<std::string> piped = ReadFileBytes(fifo);
  ::waitpid(writer, nullptr, 0);
  REQUIRE(piped.ok());
  CHECK(piped->size() == 10000);
  writer = WriteIntoFifo(fifo, 3 << 20);
  Result<std::string> endless = ReadFileBytes(fifo, {.max_bytes = 1 << 20});
  ::kill(writer, SIGKILL);
  ::waitpid(writer, nullptr, 0);
  REQUIRE_FALSE(endless.ok());
  CHECK(endless.status().code() == ErrorCode::kResourceExhausted);
  CHECK_THAT(endless.status().message(), Catch::Matchers::Contains("larger than the 1 MiB limit"));
}

TEST_CASE("ReadFileBytes refuses a regular file beyond its limit before reading it") {
  TempDir dir;
  const std::string path = dir.path() + "/big";
  REQUIRE(WriteFileAtomic(path, std::string(4097, 'x')).ok());
  Result<std::string> big = ReadFileBytes(path, {.max_bytes = 4096});
  REQUIRE_FALSE(big.ok());
  CHECK(big.status().code() == ErrorCode::kResourceExhausted);
  CHECK_THAT(big.status().message(), Catch::Matchers::Contains("larger than the 4096 B limit"));
  CHECK(ReadFileBytes(path, {.max_bytes = 4097}).ok());
  CHECK(kMaxInputFileBytes == size_t{1} << 30);
}

TEST_CASE("file io: a rotating window's file is named once for every writer", "[file-io]") {
  CHECK(WindowFilePath("out", "worker-1", 1700000000123456789) == "out/worker-1-1700000000123456789.pb.gz");
  // A name made of a replica, an object or a user's label cannot leave its folder.
  CHECK(WindowFilePath("/tmp/w", "ROOMS:a/../b", 5) == "/tmp/w/ROOMS:a-..-b-5.pb.gz");
  CHECK(WindowFilePath(".", "two words", 0) == "./two-words-0.pb.gz");
}
