#include "tools/heapprof/interrupt.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <utility>

namespace heapprof::cli {
namespace {

std::atomic<int> g_signal{0};
std::atomic<int> g_wake_fd{-1};
static_assert(std::atomic<int>::is_always_lock_free, "the signal handler needs lock-free atomics");

struct sigaction g_previous_int {};
struct sigaction g_previous_term {};

constexpr char kSignalled = 's';
constexpr char kQuit = 'q';

// Async-signal-safe: atomics, write(2) and _exit(2) only.
void OnSignal(int signo) {
  int saved_errno = errno;
  int expected = 0;
  if (!g_signal.compare_exchange_strong(expected, signo)) {
    _exit(InterruptedExitCode(expected));  // the second signal: the user insists
  }
  int fd = g_wake_fd.load();
  if (fd >= 0) {
    ssize_t ignored = ::write(fd, &kSignalled, 1);
    (void)ignored;
  }
  errno = saved_errno;
}

}  // namespace

int InterruptedExitCode(int signal) { return 128 + signal; }

const char* SignalName(int signal) {
  switch (signal) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
  }
  return "a signal";
}

InterruptWatcher::InterruptWatcher(std::function<void()> on_signal) : on_signal_(std::move(on_signal)) {
  g_signal.store(0);
  if (::pipe2(pipe_, O_CLOEXEC) == 0) {
    g_wake_fd.store(pipe_[1]);
    thread_ = std::thread([this] {
      for (;;) {
        char c = 0;
        ssize_t n = ::read(pipe_[0], &c, 1);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0 || c == kQuit) return;
        if (c == kSignalled && on_signal_) on_signal_();
      }
    });
  }
  struct sigaction action {};
  action.sa_handler = OnSignal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  // A signal the parent ignores stays ignored (nohup, background jobs of a script).
  for (auto [signo, previous] : {std::pair{SIGINT, &g_previous_int}, std::pair{SIGTERM, &g_previous_term}}) {
    ::sigaction(signo, nullptr, previous);
    if (previous->sa_handler != SIG_IGN) ::sigaction(signo, &action, nullptr);
  }
}

void InterruptWatcher::StopWatching() {
  if (!thread_.joinable()) return;
  // The handler may still write: it then finds a pipe nobody reads, which is harmless.
  ssize_t ignored = ::write(pipe_[1], &kQuit, 1);
  (void)ignored;
  thread_.join();
}

InterruptWatcher::~InterruptWatcher() {
  StopWatching();
  ::sigaction(SIGINT, &g_previous_int, nullptr);
  ::sigaction(SIGTERM, &g_previous_term, nullptr);
  g_wake_fd.store(-1);
  for (int fd : pipe_) {
    if (fd >= 0) ::close(fd);
  }
}

int InterruptWatcher::received() { return g_signal.load(); }

}  // namespace heapprof::cli
