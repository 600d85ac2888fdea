// One thread per worker runtime with a time limit. It sleeps until the armed
// deadline; if the call is still running then, it calls TerminateExecution
// (the one V8 call that is safe from another thread) and records that it did,
// so the runtime can tell a timeout from a SIGINT or the heap limit.
#include "heapprof/runtime/worker_watchdog.h"

namespace heapprof::internal {

Watchdog::Watchdog(v8::Isolate* isolate, std::chrono::milliseconds limit) : isolate_(isolate), limit_(limit) {
  if (limit_.count() > 0) thread_ = std::thread([this] { Loop(); });
}

Watchdog::~Watchdog() {
  if (!thread_.joinable()) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

void Watchdog::Arm() {
  if (limit_.count() <= 0) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    armed_ = true;
    deadline_ = std::chrono::steady_clock::now() + limit_;
  }
  wake_.notify_one();
}

void Watchdog::Disarm() {
  if (limit_.count() <= 0) return;
  std::lock_guard<std::mutex> lock(mutex_);
  armed_ = false;
  // Under the lock, so the thread cannot fire between this check and the cancel.
  if (fired_.exchange(false)) isolate_->CancelTerminateExecution();
}

void Watchdog::Loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    if (!armed_) {
      wake_.wait(lock);
      continue;
    }
    if (wake_.wait_until(lock, deadline_) == std::cv_status::timeout && armed_ && !stopping_ &&
        std::chrono::steady_clock::now() >= deadline_) {
      fired_.store(true);
      armed_ = false;
      isolate_->TerminateExecution();
    }
  }
}

}  // namespace heapprof::internal
