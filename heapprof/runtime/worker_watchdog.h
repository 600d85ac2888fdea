// The per-request time limit of the worker runtime: a thread that terminates
// the isolate's JavaScript when a request (or a module's top level) runs past
// its deadline.
#pragma once

#include <v8.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace heapprof::internal {

class Watchdog {
 public:
  // A limit of zero never fires (and starts no thread).
  Watchdog(v8::Isolate* isolate, std::chrono::milliseconds limit);
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  std::chrono::milliseconds limit() const { return limit_; }
  // True from the moment the watchdog terminated the current call until Disarm.
  bool fired() const { return fired_.load(); }

  // Armed for the lifetime of a Scope around one request or one load; when it
  // fired, the scope's end cancels the termination so the isolate serves again.
  class Scope {
   public:
    explicit Scope(Watchdog& watchdog) : watchdog_(watchdog) { watchdog_.Arm(); }
    ~Scope() { watchdog_.Disarm(); }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    Watchdog& watchdog_;
  };

 private:
  void Arm();
  void Disarm();
  void Loop();

  v8::Isolate* isolate_;
  std::chrono::milliseconds limit_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool armed_ = false;
  bool stopping_ = false;
  std::chrono::steady_clock::time_point deadline_;
  std::atomic<bool> fired_{false};
  std::thread thread_;
};

}  // namespace heapprof::internal
