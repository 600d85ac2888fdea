#include "tools/heapprof/push_flags.h"

#include <fmt/format.h>
#include <openssl/evp.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "heapprof/core/file_io.h"
#include "heapprof/core/pprof.h"
#include "heapprof/core/text.h"
#include "heapprof/core/version.h"

namespace heapprof::cli {

namespace {
// Labels the command sets itself: --push-label may not replace these two.
bool Reserved(const std::string& name) { return name == "__name__" || name == "__delta__"; }

std::string Trim(std::string s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  size_t e = s.find_last_not_of(" \t\r\n");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}
}  // namespace

void AddPushOptions(CLI::App* app, PushFlags& flags) {
  app->add_option("--push", flags.url,
                  "Push each closed continuous window to a Pyroscope-compatible store: http://HOST[:PORT][/PREFIX] "
                  "(POST PREFIX/push.v1.PusherService/Push); retried with backoff, never blocking the worker");
  app->add_option("--push-label", flags.labels,
                  "A label on every pushed series, NAME=VALUE (repeatable); may replace service_name, version, "
                  "replica, runtime, heapprof_version")
      ->allow_extra_args(false);
  app->add_option("--push-token-file", flags.token_file,
                  "A file whose first line is the store's token, sent as 'Authorization: Bearer TOKEN'")
      ->check(CLI::ExistingFile);
  app->add_option("--push-tenant", flags.tenant, "The tenant of a multi-tenant store (sent as X-Scope-OrgID)");
  app->add_option("--push-queue", flags.queue,
                  "Windows waiting to be pushed while the store is slow or away; beyond, the oldest is dropped "
                  "(counted)")
      ->check(CLI::Range(size_t{1}, size_t{1} << 16))
      ->capture_default_str();
}

void AddPushRefused(CLI::App* app, std::shared_ptr<std::string> url) {
  app->add_option("--push", *url, "Not in this command: heapprof serve WORKER --continuous D --push URL pushes windows")
      ->type_name("URL");
}

std::string PushRefusal(const std::string& url, const std::string& why) {
  if (url.empty()) return "";
  return "--push is not built for this command yet: " + why;
}

std::string PushFlagsWithoutPush(const PushFlags& flags) {
  if (!flags.url.empty()) return "";
  const char* flag = !flags.labels.empty()       ? "--push-label"
                     : !flags.token_file.empty() ? "--push-token-file"
                     : !flags.tenant.empty()     ? "--push-tenant"
                     : flags.queue != remote::PushOptions{}.max_queued ? "--push-queue"
                                                                       : nullptr;
  if (flag == nullptr) return "";
  return fmt::format("{} says how to push; without --push URL nothing is pushed", flag);
}

PushIdentity IdentityOf(const std::string& config_name, const std::string& main_module, std::string runtime) {
  PushIdentity id;
  id.service_name = config_name.empty() ? std::filesystem::path(main_module).stem().string() : config_name;
  std::ifstream in(main_module, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  std::string bytes = text.str();
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  if (EVP_Digest(bytes.data(), bytes.size(), digest, &n, EVP_sha256(), nullptr) == 1 && n >= 6) {
    id.version = fmt::format("{:02x}{:02x}{:02x}{:02x}{:02x}{:02x}", digest[0], digest[1], digest[2], digest[3],
                             digest[4], digest[5]);
  }
  id.runtime = std::move(runtime);
  return id;
}

Result<std::unique_ptr<PushSink>> PushSink::Start(const std::string& command, const PushFlags& flags,
                                                  const PushIdentity& identity) {
  auto sink = std::make_unique<PushSink>();
  std::vector<remote::PushLabel>& labels = sink->labels_;
  labels = {{"__name__", "memory"},
            {"service_name", identity.service_name},
            {"__delta__", "false"},
            {"runtime", identity.runtime},
            {"heapprof_version", kVersion}};
  if (!identity.version.empty()) labels.push_back({"version", identity.version});
  for (const std::string& kv : flags.labels) {
    size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) {
      return Error(ErrorCode::kInvalidArgument, fmt::format("--push-label {}: not NAME=VALUE", kv));
    }
    std::string name = kv.substr(0, eq), value = kv.substr(eq + 1);
    if (Reserved(name)) {
      return Error(ErrorCode::kInvalidArgument,
                   fmt::format("--push-label {}: {} is set by heapprof (memory profiles, not cumulative)", kv, name));
    }
    bool replaced = false;
    for (remote::PushLabel& l : labels) {
      if (l.name == name) {
        l.value = value;
        replaced = true;
      }
    }
    if (name == "replica") {
      return Error(ErrorCode::kInvalidArgument,
                   fmt::format("--push-label {}: replica is each window's own replica name", kv));
    }
    if (!replaced) labels.push_back({name, value});
  }
  // The labels as the store will see them (with a replica), checked now.
  std::vector<remote::PushLabel> probe = labels;
  probe.push_back({"replica", "x"});
  if (Status s = remote::CheckPushLabels(probe); !s.ok()) return s;

  remote::PushOptions options;
  options.url = flags.url;
  options.tenant = flags.tenant;
  options.max_queued = flags.queue;
  if (!flags.token_file.empty()) {
    std::ifstream in(flags.token_file);
    std::string line;
    std::getline(in, line);
    options.bearer_token = Trim(line);
    if (!in && options.bearer_token.empty()) {
      return Error(ErrorCode::kInvalidArgument, "--push-token-file " + flags.token_file + " cannot be read");
    }
    if (options.bearer_token.empty()) {
      return Error(ErrorCode::kInvalidArgument, "--push-token-file " + flags.token_file + ": its first line is empty");
    }
  }
  options.log = [command](const std::string& line) {
    fmt::print(stderr, "heapprof {}: {}\n", command, line);
    std::fflush(stderr);
  };
  HEAPPROF_ASSIGN_OR_RETURN(sink->pusher_, remote::Pusher::Start(std::move(options)));
  return sink;
}

void PushSink::Window(const std::string& replica, const Profile& profile) {
  std::vector<remote::PushLabel> labels = labels_;
  labels.push_back({"replica", replica});
  std::time_t start = static_cast<std::time_t>(profile.time_nanos / 1'000'000'000);
  std::tm tm{};
  gmtime_r(&start, &tm);
  char when[32];
  std::strftime(when, sizeof when, "%H:%M:%S", &tm);
  Result<remote::PushProfile> prepared =
      remote::PreparePush(profile, std::move(labels), SplitLimits{}, fmt::format("{}'s window of {} UTC", replica, when));
  if (!prepared.ok()) {
    ++unprepared_;
    fmt::print(stderr, "heapprof: push: {}'s window of {} UTC not pushed: {}\n", replica, when,
               prepared.status().message());
    return;
  }
  if (prepared->parts.size() > 1) ++split_windows_;
  pusher_->Enqueue(std::move(prepared).value());
}

void PushSink::Stop(std::chrono::milliseconds drain) { pusher_->Stop(drain); }

std::string PushSink::Summary() const {
  remote::PushStats s = pusher_->Stats();
  std::string out = fmt::format("pushed {} window{} ({} profile{}, {} bytes) to {} in {} request{}", s.pushed,
                                s.pushed == 1 ? "" : "s", s.parts, s.parts == 1 ? "" : "s", s.bytes,
                                pusher_->Describe(), s.requests, s.requests == 1 ? "" : "s");
  if (split_windows_ > 0) out += fmt::format("; {} split to stay within the store's limits", split_windows_);
  if (s.retries > 0) out += fmt::format("; {} failed request{} retried", s.retries, s.retries == 1 ? "" : "s");
  if (s.dropped > 0) out += fmt::format("; {} dropped (queue full)", s.dropped);
  if (s.rejected > 0) out += fmt::format("; {} refused by the store", s.rejected);
  if (s.unsent > 0) out += fmt::format("; {} still queued at exit, not pushed", s.unsent);
  if (unprepared_ > 0) out += fmt::format("; {} could not be prepared", unprepared_);
  if (!s.last_error.empty() && (s.dropped || s.rejected || s.unsent)) out += "; last error: " + s.last_error;
  return out;
}

bool PushSink::AllPushed() const {
  remote::PushStats s = pusher_->Stats();
  return s.dropped == 0 && s.rejected == 0 && s.unsent == 0 && unprepared_ == 0;
}

void WindowOutputs::Window(const std::string& replica, Result<Profile> window) {
  ++windows_;
  if (!window.ok()) {
    ++failed_;
    errors_.push_back(replica + ": " + window.status().message());
    fmt::print(stderr, "heapprof {}: {}: a continuous window failed: {}\n", command_, replica, window.status().message());
    std::fflush(stderr);
    return;
  }
  if (push_) push_->Window(replica, window.value());
  if (dir_.empty()) return;
  std::string path = fmt::format("{}/{}-{}.pb.gz", dir_, internal::FileSafeName(replica), window->time_nanos);
  // A full disk does not lose the window: a fallback folder takes it, said as it happens.
  Delivery d = WriteOrFallBack(path, fallback_dirs_, [&](const std::string& to) { return WritePprofFile(to, window.value()); });
  if (d.at_named_path()) {
    ++written_;
    return;
  }
  ++failed_;
  if (!d.written.empty()) ++fallen_back_;
  errors_.push_back(replica + ": " + d.failures.front() + d.Where());
  fmt::print(stderr, "heapprof {}: {}: {}{}\n", command_, replica, d.failures.front(), d.Where());
  std::fflush(stderr);
}

void WindowOutputs::Stop(std::chrono::milliseconds drain) {
  if (push_) push_->Stop(drain);
}

void WindowOutputs::PrintSummary() const {
  fmt::print("continuous: {} window{} closed", windows_, windows_ == 1 ? "" : "s");
  if (!dir_.empty()) fmt::print("; wrote {} to {}/", written_, dir_);
  if (failed_ > 0) fmt::print("; {} failed", failed_);
  if (fallen_back_ > 0) fmt::print(" ({} of them written to a fallback folder instead)", fallen_back_);
  fmt::print("\n");
  if (push_) fmt::print("{}\n", push_->Summary());
  std::fflush(stdout);
}

bool WindowOutputs::ok() const { return failed_ == 0 && (!push_ || push_->AllPushed()); }

}  // namespace heapprof::cli
