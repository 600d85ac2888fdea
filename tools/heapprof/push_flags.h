// The push flags (--push URL, --push-label, --push-token-file, --push-tenant,
// --push-ca-file, --push-queue) and what the commands share to push each closed window to a
// continuous-profiling store (heapprof/remote/pyroscope_push.h): the labels
// every series carries, and a sink that splits, labels and queues a window.
#pragma once

#include <CLI/CLI.hpp>

#include <memory>
#include <string>
#include <vector>

#include "heapprof/core/profile.h"
#include "heapprof/core/status.h"
#include "heapprof/remote/pyroscope_push.h"
#include "heapprof/remote/window_pusher.h"

namespace heapprof::cli {

struct PushFlags {
  std::string url;
  std::vector<std::string> labels;  // NAME=VALUE
  std::string token_file;
  std::string tenant;
  std::string ca_file;  // --push-ca-file: the CA of an https:// store with a private one
  size_t queue = remote::PushOptions{}.max_queued;
};

void AddPushOptions(CLI::App* app, PushFlags& flags);

// A usage error when a --push-* flag is given without --push; "" otherwise.
std::string PushFlagsWithoutPush(const PushFlags& flags);

// The worker's name (config_name, else the main module's stem) and a short
// SHA-256 of its main module, as the push's identity wants them.
remote::PushIdentity IdentityOf(const std::string& config_name, const std::string& main_module, std::string runtime);

// Starts the push the flags describe (--push-label over `identity`'s labels,
// the token file, the tenant, the queue); `command` prefixes its log lines
// on stderr.
Result<std::shared_ptr<remote::WindowPusher>> StartPush(const std::string& command, const PushFlags& flags,
                                                        remote::PushIdentity identity);

// Where each closed window of a periodic continuous run goes: pushed (with
// --push), written to a folder as REPLICA-<start>.pb.gz (without --push, or
// with --output-dir given too), or both. Called from one thread at a time.
class WindowOutputs {
 public:
  // `dir` "" writes no files; `push` null pushes nothing.
  WindowOutputs(std::string command, std::shared_ptr<remote::WindowPusher> push, std::string dir)
      : command_(std::move(command)), push_(std::move(push)), dir_(std::move(dir)) {}
  // Where a window goes when `dir` cannot take it (FallbackDirs); none by default.
  void SetFallback(std::vector<std::string> dirs) { fallback_dirs_ = std::move(dirs); }
  void Window(const std::string& replica, Result<Profile> window);
  // Pushes what is still queued for at most `drain`.
  void Stop(std::chrono::milliseconds drain);
  // One line per output ("wrote ...", "pushed ..."), to stdout; failures to stderr.
  void PrintSummary() const;
  // No window lost: every one written and pushed.
  bool ok() const;
  // The push, if any (its counters).
  const remote::WindowPusher* push() const { return push_.get(); }

 private:
  std::string command_;
  std::shared_ptr<remote::WindowPusher> push_;
  std::string dir_;
  std::vector<std::string> fallback_dirs_;
  uint64_t windows_ = 0, written_ = 0, failed_ = 0, fallen_back_ = 0;
  std::vector<std::string> errors_;
};

}  // namespace heapprof::cli
