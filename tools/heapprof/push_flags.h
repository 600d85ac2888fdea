// The push flags (--push URL, --push-label, --push-token-file, --push-tenant,
// --push-queue) and what the commands share to push each closed window to a
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

namespace heapprof::cli {

struct PushFlags {
  std::string url;
  std::vector<std::string> labels;  // NAME=VALUE
  std::string token_file;
  std::string tenant;
  size_t queue = remote::PushOptions{}.max_queued;
};

void AddPushOptions(CLI::App* app, PushFlags& flags);

// For commands that do not push: --push is parsed only to be refused with
// the reason and the command that does (`why`), so it is never ignored.
void AddPushRefused(CLI::App* app, std::shared_ptr<std::string> url);
// The refusal, or "" when --push was not given.
std::string PushRefusal(const std::string& url, const std::string& why);

// A usage error when a --push-* flag is given without --push; "" otherwise.
std::string PushFlagsWithoutPush(const PushFlags& flags);

// Who is pushing: the automatic labels of every series.
struct PushIdentity {
  std::string service_name;  // the worker's name from its config, else the script's stem
  std::string version;       // a short SHA-256 of the worker's main module
  std::string runtime;       // "embedded" or "workerd"
};
// The worker's name and a short SHA-256 of its main module, as PushIdentity wants them.
PushIdentity IdentityOf(const std::string& config_name, const std::string& main_module, std::string runtime);

// Pushes each window it is given (from any one thread at a time).
class PushSink {
 public:
  // Checks the labels and the token file, starts the pusher; `command`
  // prefixes its log lines on stderr.
  static Result<std::unique_ptr<PushSink>> Start(const std::string& command, const PushFlags& flags,
                                                 const PushIdentity& identity);
  // Splits, labels (replica = `replica`) and queues one window; never waits
  // for the network. A window that cannot be prepared is counted as failed.
  void Window(const std::string& replica, const Profile& profile);
  // Pushes what is queued for at most `drain`, then stops.
  void Stop(std::chrono::milliseconds drain);
  // "pushed N windows (M profiles, B bytes) to URL; R retried requests; D dropped (queue full); ..."
  std::string Summary() const;
  // Whether every window reached the store.
  bool AllPushed() const;
  std::string url() const { return pusher_->Describe(); }

 private:
  std::vector<remote::PushLabel> labels_;  // without replica
  std::unique_ptr<remote::Pusher> pusher_;
  uint64_t unprepared_ = 0;
  uint64_t split_windows_ = 0;
};

// Where each closed window of a periodic continuous run goes: pushed (with
// --push), written to a folder as REPLICA-<start>.pb.gz (without --push, or
// with --output-dir given too), or both. Called from one thread at a time.
class WindowOutputs {
 public:
  // `dir` "" writes no files; `push` null pushes nothing.
  WindowOutputs(std::string command, std::unique_ptr<PushSink> push, std::string dir)
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

 private:
  std::string command_;
  std::unique_ptr<PushSink> push_;
  std::string dir_;
  std::vector<std::string> fallback_dirs_;
  uint64_t windows_ = 0, written_ = 0, failed_ = 0, fallen_back_ = 0;
  std::vector<std::string> errors_;
};

}  // namespace heapprof::cli
