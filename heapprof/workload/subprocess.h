// Running another program to completion (the project's wrangler, heapprof's
// esbuild) and finding programs heapprof's own set-up installed. Internal to
// heapprof_workload.
#pragma once

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "heapprof/core/status.h"

namespace heapprof::internal {

struct ProcessSpec {
  std::vector<std::string> argv;                            // argv[0] is the program's path
  std::string cwd;                                          // "" = heapprof's own
  std::vector<std::pair<std::string, std::string>> setenv;  // added to heapprof's environment
  std::chrono::milliseconds timeout{std::chrono::minutes(5)};
  size_t max_output = size_t{1} << 20;  // the rest of the output is dropped, not the process
};

struct ProcessResult {
  int exit_code = -1;      // -1 when it was killed by a signal
  bool timed_out = false;  // killed (its whole process group) at the timeout
  std::string output;      // stdout and stderr, interleaved as written
};

// Runs spec.argv in its own process group with stdin from /dev/null and waits
// for it. An error only when it could not be started; a failing program is a
// result with its exit code.
Result<ProcessResult> RunProcess(const ProcessSpec& spec);

// `relative` (e.g. ".deps/node26/.../bin/node") under the nearest folder above
// heapprof's executable that has it, or "" (a build tree or an unpacked package).
std::string FindBesideSelf(const std::string& relative);

// `name` in a folder of $PATH, executable, or "".
std::string FindOnPath(const std::string& name);

}  // namespace heapprof::internal
