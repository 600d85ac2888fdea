// Ctrl-C (SIGINT) and SIGTERM during a long command: the first signal asks the
// command to wrap up (e.g. `heapprof run` writes the profile of the window so
// far); a second one ends the process at once.
#pragma once

#include <functional>
#include <thread>

namespace heapprof::cli {

// Installs SIGINT and SIGTERM handlers for its lifetime. The handler only
// records the signal and wakes a watcher thread (async-signal-safe); the
// watcher runs `on_signal` once, outside the handler, e.g. to terminate the
// JavaScript an isolate is running. A signal that was ignored when the
// watcher started stays ignored. One instance at a time per process.
class InterruptWatcher {
 public:
  explicit InterruptWatcher(std::function<void()> on_signal);
  ~InterruptWatcher();
  InterruptWatcher(const InterruptWatcher&) = delete;
  InterruptWatcher& operator=(const InterruptWatcher&) = delete;

  // The first signal received (SIGINT or SIGTERM), or 0.
  static int received();
  // Stops the watcher thread: `on_signal` is not called after this returns.
  // The handlers stay installed until destruction.
  void StopWatching();

 private:
  std::function<void()> on_signal_;
  int pipe_[2] = {-1, -1};
  std::thread thread_;
};

// The exit status of a command interrupted by `signal`: 128 + signal (130 for SIGINT).
int InterruptedExitCode(int signal);
// "SIGINT" / "SIGTERM".
const char* SignalName(int signal);

}  // namespace heapprof::cli
