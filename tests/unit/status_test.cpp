// Status and Result: misuse is refused or fails loudly in every build, and
// the return-if-error helpers pass errors up unchanged.
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <string>

#include <catch2/catch.hpp>

#include "heapprof/core/status.h"

using namespace heapprof;

namespace {

Result<int> Parse(const std::string& s) {
  if (s.empty()) return Error(ErrorCode::kInvalidArgument, "empty");
  return static_cast<int>(s.size());
}

Status Check(bool good) { return good ? Status::Ok() : Error(ErrorCode::kDataLoss, "bad"); }

Result<int> Twice(const std::string& s) {
  HEAPPROF_ASSIGN_OR_RETURN(int n, Parse(s));
  HEAPPROF_RETURN_IF_ERROR(Check(n < 5));
  return 2 * n;
}

Status Both(const std::string& a, const std::string& b) {
  HEAPPROF_RETURN_IF_ERROR(Parse(a));
  int n = 0;
  HEAPPROF_ASSIGN_OR_RETURN(n, Parse(b));
  return Check(n > 1);
}

}  // namespace

TEST_CASE("a Result built from an OK status holds an error, not a missing value", "[status]") {
  Result<int> r = Status::Ok();
  CHECK_FALSE(r.ok());
  CHECK(r.status().code() == ErrorCode::kInternal);
}

TEST_CASE("value() of an error ends the process with the error, in every build", "[status]") {
  pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    Result<int> r = Error(ErrorCode::kNotFound, "no such thing");
    // Keep the test's output clean: no message, and no report from Catch's
    // own SIGABRT handler (a "failed" test case in a passing run).
    std::fclose(stderr);
    std::signal(SIGABRT, SIG_DFL);
    volatile int v = r.value();
    (void)v;
    _exit(0);  // reached only if value() did not fail
  }
  int status = 0;
  REQUIRE(waitpid(pid, &status, 0) == pid);
  REQUIRE(WIFSIGNALED(status));
  CHECK(WTERMSIG(status) == SIGABRT);
}

TEST_CASE("the return-if-error helpers pass the first error up", "[status]") {
  CHECK(Twice("abc").value() == 6);
  CHECK(Twice("").status().message() == "empty");
  CHECK(Twice("abcdef").status().code() == ErrorCode::kDataLoss);
  CHECK(Both("a", "bc").ok());
  CHECK(Both("", "bc").message() == "empty");
  CHECK(Both("a", "").message() == "empty");
  CHECK(Both("a", "b").message() == "bad");
}
