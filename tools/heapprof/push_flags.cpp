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
std::string Trim(std::string s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  size_t e = s.find_last_not_of(" \t\r\n");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}
}  // namespace

void AddPushOptions(CLI::App* app, PushFlags& flags) {
  app->add_option("--push", flags.url,
                  "Push each closed continuous window to a Pyroscope-compatible store: http(s)://HOST[:PORT][/PREFIX] "
                  "(POST PREFIX/push.v1.PusherService/Push); retried with backoff, never blocking the worker");
  app->add_option("--push-label", flags.labels,
                  "A label on every pushed series, NAME=VALUE (repeatable); may replace service_name, version, "
                  "runtime, heapprof_version (replica is each window's own)")
      ->allow_extra_args(false);
  app->add_option("--push-token-file", flags.token_file,
                  "A file whose first line is the store's token, sent as 'Authorization: Bearer TOKEN'")
      ->check(CLI::ExistingFile);
  app->add_option("--push-tenant", flags.tenant, "The tenant of a multi-tenant store (sent as X-Scope-OrgID)");
  app->add_option("--push-ca-file", flags.ca_file,
                  "With an https:// store: PEM CA certificates to verify it with, e.g. a private CA [default: the "
                  "system's CAs]")
      ->check(CLI::ExistingFile);
  app->add_option("--push-queue", flags.queue,
                  "Windows waiting to be pushed while the store is slow or away; beyond, the oldest is dropped "
                  "(counted)")
      ->check(CLI::Range(size_t{1}, size_t{1} << 16))
      ->capture_default_str();
}

std::string PushFlagsWithoutPush(const PushFlags& flags) {
  if (!flags.url.empty()) return "";
  const char* flag = !flags.labels.empty()                             ? "--push-label"
                     : !flags.token_file.empty()                       ? "--push-token-file"
                     : !flags.tenant.empty()                           ? "--push-tenant"
                     : !flags.ca_file.empty()                          ? "--push-ca-file"
                     : flags.queue != remote::PushOptions{}.max_queued ? "--push-queue"
                                                                       : nullptr;
  if (flag == nullptr) return "";
  return fmt::format("{} says how to push; without --push URL nothing is pushed", flag);
}

remote::PushIdentity IdentityOf(const std::string& config_name, const std::string& main_module, std::string runtime) {
  remote::PushIdentity id;
  id.service_name = config_name.empty() ? std::filesystem::path(main_module).stem().string() : config_name;
  std::ifstream in(main_module, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  std::string bytes = text.str();
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  if (!bytes.empty() && EVP_Digest(bytes.data(), bytes.size(), digest, &n, EVP_sha256(), nullptr) == 1 && n >= 6) {
    id.version = fmt::format("{:02x}{:02x}{:02x}{:02x}{:02x}{:02x}", digest[0], digest[1], digest[2], digest[3],
                             digest[4], digest[5]);
  }
  id.runtime = std::move(runtime);
  return id;
}

Result<std::shared_ptr<remote::WindowPusher>> StartPush(const std::string& command, const PushFlags& flags,
                                                        remote::PushIdentity identity) {
  for (const std::string& kv : flags.labels) {
    size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) {
      return Error(ErrorCode::kInvalidArgument, fmt::format("--push-label {}: not NAME=VALUE", kv));
    }
    identity.extra.push_back({kv.substr(0, eq), kv.substr(eq + 1)});
  }
  remote::PushOptions options;
  options.url = flags.url;
  options.tenant = flags.tenant;
  options.ca_file = flags.ca_file;
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
    fmt::print(stderr, "heapprof {}: push: {}\n", command, line);
    std::fflush(stderr);
  };
  Result<std::unique_ptr<remote::WindowPusher>> started =
      remote::WindowPusher::Start(std::move(options), std::move(identity));
  if (!started.ok()) return started.status();
  return std::shared_ptr<remote::WindowPusher>(std::move(started).value());
}

void WindowOutputs::Window(const std::string& replica, Result<Profile> window) {
  ++windows_;
  if (!window.ok()) {
    ++failed_;
    errors_.push_back(replica + ": " + window.status().message());
    fmt::print(stderr, "heapprof {}: {}: a continuous window failed: {}\n", command_, replica,
               window.status().message());
    std::fflush(stderr);
    return;
  }
  if (push_) push_->Window(replica, window.value());
  if (dir_.empty()) return;
  std::string path = fmt::format("{}/{}-{}.pb.gz", dir_, internal::FileSafeName(replica), window->time_nanos);
  // A full disk does not lose the window: a fallback folder takes it, said as it happens.
  Delivery d =
      WriteOrFallBack(path, fallback_dirs_, [&](const std::string& to) { return WritePprofFile(to, window.value()); });
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
