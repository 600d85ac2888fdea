// The pusher's thread takes the oldest queued window, sends it, and on a
// transient failure puts it back at the front (unless the queue filled up
// meanwhile: then it is the oldest, and dropped) and waits out the backoff.
// Requests go through SendHttp (one connection each, one deadline).
#include "heapprof/remote/pyroscope_push.h"

#include <fmt/format.h>

#include <cctype>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <mutex>
#include <optional>
#include <random>
#include <thread>

#include "heapprof/core/gzip.h"
#include "heapprof/core/pprof.h"
#include "heapprof/core/text.h"
#include "heapprof/core/version.h"
#include "heapprof/proto/push.pb.h"
#include "heapprof/remote/http_client.h"

namespace heapprof::remote {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::string_view kPushPath = "/push.v1.PusherService/Push";
constexpr size_t kMaxLabelName = 1024;
constexpr size_t kMaxLabelValue = 2048;

bool ValidLabelName(std::string_view name) {
  if (name.empty()) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
    if (!alpha && !(i > 0 && c >= '0' && c <= '9')) return false;
  }
  return true;
}

// Bytes a message may show as they are; others as \xNN, at most `limit` of them.
std::string EscapeForMessage(std::string_view text, size_t limit = 64) {
  std::string out;
  for (size_t i = 0; i < text.size() && i < limit; ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7F && c != '\\') {
      out += static_cast<char>(c);
    } else {
      out += fmt::format("\\x{:02x}", c);
    }
  }
  if (text.size() > limit) out += "...";
  return out;
}

bool EqualsIgnoreCase(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  }
  return true;
}

std::string Uuid4() {
  thread_local std::mt19937_64 rng{std::random_device{}()};
  uint64_t hi = rng(), lo = rng();
  hi = (hi & 0xFFFFFFFFFFFF0FFFull) | 0x0000000000004000ull;  // version 4
  lo = (lo & 0x3FFFFFFFFFFFFFFFull) | 0x8000000000000000ull;  // variant 10
  return fmt::format("{:08x}-{:04x}-{:04x}-{:04x}-{:012x}", hi >> 32, (hi >> 16) & 0xFFFF, hi & 0xFFFF, lo >> 48,
                     lo & 0xFFFFFFFFFFFFull);
}

struct PushUrl {
  bool tls = false;  // https://
  HostPort server;
  std::string prefix;  // "" or "/path" without a trailing '/'
};

Result<PushUrl> ParsePushUrl(std::string_view url) {
  auto bad = [&](std::string_view why) {
    return Error(ErrorCode::kInvalidArgument, fmt::format("push URL \"{}\": {}", EscapeForMessage(url), why));
  };
  const bool tls = url.starts_with("https://");
  if (!tls && !url.starts_with("http://")) return bad("must start with http:// or https://");
  std::string_view rest = url.substr(tls ? 8 : 7);
  size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  std::string prefix = slash == std::string_view::npos ? "" : std::string(rest.substr(slash));
  if (prefix.find_first_of("?#") != std::string::npos) return bad("a query or fragment has no place in it");
  while (!prefix.empty() && prefix.back() == '/') prefix.pop_back();
  if (authority.find('@') != std::string_view::npos) {
    return bad("credentials in the URL are not read: use --push-token-file");
  }
  std::string hostport(authority);
  bool has_port = !authority.empty() && authority.back() != ']' &&
                  authority.find(':', authority.starts_with("[") ? authority.find(']') : 0) != std::string_view::npos;
  if (!has_port) hostport += tls ? ":443" : ":80";
  Result<HostPort> hp = ParseHostPort(hostport, PortZero::kInvalid);
  if (!hp.ok()) return bad(hp.status().message());
  return PushUrl{tls, hp.value(), prefix};
}

// A short, printable excerpt of an error answer's body.
std::string BodyExcerpt(std::string_view body) {
  std::string_view head = body.substr(0, 200);
  while (!head.empty() && (head.back() == '\n' || head.back() == '\r')) head.remove_suffix(1);
  return EscapeForMessage(head, 200);
}

}  // namespace

Status CheckPushLabels(const std::vector<PushLabel>& labels) {
  if (labels.size() > kMaxPushLabels) {
    return Error(ErrorCode::kInvalidArgument,
                 fmt::format("{} push labels, more than the store's {} per series", labels.size(), kMaxPushLabels));
  }
  bool has_name = false, has_service = false;
  for (size_t i = 0; i < labels.size(); ++i) {
    const PushLabel& l = labels[i];
    if (!ValidLabelName(l.name) || l.name.size() > kMaxLabelName) {
      return Error(ErrorCode::kInvalidArgument,
                   fmt::format("push label name \"{}\" is not [a-zA-Z_][a-zA-Z0-9_]* (of at most {} bytes)",
                               EscapeForMessage(l.name), kMaxLabelName));
    }
    if (l.value.empty() || l.value.size() > kMaxLabelValue || !internal::IsValidUtf8(l.value)) {
      return Error(
          ErrorCode::kInvalidArgument,
          fmt::format("push label {}'s value must be non-empty UTF-8 of at most {} bytes", l.name, kMaxLabelValue));
    }
    for (size_t j = 0; j < i; ++j) {
      if (labels[j].name == l.name) {
        return Error(ErrorCode::kInvalidArgument, fmt::format("push label {} is given twice", l.name));
      }
    }
    has_name = has_name || l.name == "__name__";
    has_service = has_service || l.name == "service_name";
  }
  if (!has_name || !has_service) {
    return Error(ErrorCode::kInvalidArgument, "push labels need __name__ and service_name");
  }
  return Status::Ok();
}

uint64_t PushProfile::bytes() const {
  uint64_t n = 0;
  for (const std::string& p : parts) n += p.size();
  return n;
}

Result<PushProfile> PreparePush(const Profile& profile, std::vector<PushLabel> labels, const SplitLimits& limits,
                                std::string what) {
  HEAPPROF_RETURN_IF_ERROR(CheckPushLabels(labels));
  HEAPPROF_ASSIGN_OR_RETURN(std::vector<ProfilePart> split, SplitProfile(profile, limits));
  PushProfile out;
  out.labels = std::move(labels);
  out.what = std::move(what);
  for (const ProfilePart& part : split) {
    HEAPPROF_ASSIGN_OR_RETURN(std::string gz, GzipCompress(part.pprof, kPprofGzipLevel));
    out.parts.push_back(std::move(gz));
  }
  return out;
}

std::string EncodePushRequest(const std::vector<const PushProfile*>& windows) {
  push::v1::PushRequest request;
  for (const PushProfile* w : windows) {
    push::v1::RawProfileSeries* series = request.add_series();
    for (const PushLabel& l : w->labels) {
      push::v1::LabelPair* pair = series->add_labels();
      pair->set_name(l.name);
      pair->set_value(l.value);
    }
    for (const std::string& part : w->parts) {
      push::v1::RawSample* sample = series->add_samples();
      sample->set_raw_profile(part);
      sample->set_id(Uuid4());
    }
  }
  return request.SerializeAsString();
}

class Pusher::Impl {
 public:
  Impl(PushOptions options, PushUrl url) : options_(std::move(options)), url_(std::move(url)) {}

  void Enqueue(PushProfile window) {
    std::optional<std::string> note;
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++stats_.enqueued;
      if (stopping_) {
        ++stats_.unsent;
        return;
      }
      queued_bytes_ += window.bytes();
      queue_.push_back(std::move(window));
      while (queue_.size() > 1 && (queue_.size() > options_.max_queued || queued_bytes_ > options_.max_queued_bytes)) {
        note = DropOldestLocked();
      }
    }
    cv_.notify_all();
    if (note) Log(*note);
  }

  // Under mu_: drops the oldest waiting window; the line to log for the
  // first drop of a run of them.
  std::optional<std::string> DropOldestLocked() {
    queued_bytes_ -= queue_.front().bytes();
    std::string what = queue_.front().what;
    queue_.pop_front();
    ++stats_.dropped;
    if (dropping_) return std::nullopt;
    dropping_ = true;
    return fmt::format(
        "push queue full ({} windows, {} bytes at most): dropping the oldest ({}); the store at {} "
        "is not taking them ({})",
        options_.max_queued, options_.max_queued_bytes, what, Describe(), stats_.last_error);
  }

  void Run() {
    std::chrono::milliseconds backoff = options_.first_backoff;
    bool failing = false;
    for (;;) {
      PushProfile window;
      {
        std::unique_lock<std::mutex> lock(mu_);
        cv_.wait(lock, [&] { return !queue_.empty() || stopping_; });
        if (queue_.empty() || (stopping_ && Clock::now() >= drain_until_)) break;
        window = std::move(queue_.front());
        queue_.pop_front();
        queued_bytes_ -= window.bytes();
      }
      std::chrono::milliseconds retry_after{0};
      Status sent = Send(window, &retry_after);
      if (sent.ok()) {
        std::lock_guard<std::mutex> lock(mu_);
        ++stats_.pushed;
        stats_.parts += window.parts.size();
        stats_.bytes += window.bytes();
        dropping_ = false;
        backoff = options_.first_backoff;
        if (failing) {
          failing = false;
          pending_log_ = fmt::format("push to {} works again ({} windows pushed, {} dropped so far)", Describe(),
                                     stats_.pushed, stats_.dropped);
        }
      } else if (sent.code() == ErrorCode::kInvalidArgument) {  // refused: retrying cannot help
        std::lock_guard<std::mutex> lock(mu_);
        ++stats_.rejected;
        stats_.last_error = sent.message();
        pending_log_ = fmt::format("the store at {} refused {}: {}", Describe(), window.what, sent.message());
      } else {
        std::unique_lock<std::mutex> lock(mu_);
        ++stats_.retries;
        stats_.last_error = sent.message();
        if (!failing) {
          failing = true;
          pending_log_ = fmt::format("push to {} failed ({}); retrying with backoff, up to {} windows queued",
                                     Describe(), sent.message(), options_.max_queued);
        }
        // Back to the front, unless newer windows filled the queue meanwhile:
        // then this one is the oldest, and goes.
        queued_bytes_ += window.bytes();
        queue_.push_front(std::move(window));
        std::optional<std::string> note;
        while (queue_.size() > 1 &&
               (queue_.size() > options_.max_queued || queued_bytes_ > options_.max_queued_bytes)) {
          note = DropOldestLocked();
        }
        if (note) pending_log_ = pending_log_.empty() ? *note : pending_log_ + "; " + *note;
        std::chrono::milliseconds wait =
            retry_after.count() > 0 ? std::min(retry_after, options_.max_backoff) : backoff;
        backoff = std::min(backoff * 2, options_.max_backoff);
        const Clock::time_point until = Clock::now() + wait;
        std::string line = std::move(pending_log_);
        pending_log_.clear();
        lock.unlock();
        if (!line.empty()) Log(line);
        lock.lock();
        // The backoff, cut short by Stop's drain deadline.
        for (;;) {
          Clock::time_point end = stopping_ ? std::min(until, drain_until_) : until;
          if (Clock::now() >= end) break;
          cv_.wait_until(lock, end);
        }
        continue;
      }
      std::string line;
      {
        std::lock_guard<std::mutex> lock(mu_);
        line = std::move(pending_log_);
        pending_log_.clear();
      }
      if (!line.empty()) Log(line);
    }
    std::lock_guard<std::mutex> lock(mu_);
    stats_.unsent += queue_.size();
    queue_.clear();
    queued_bytes_ = 0;
  }

  // One attempt. kInvalidArgument: the store refused it (do not retry);
  // any other error: worth retrying (`retry_after` set when the server said).
  Status Send(const PushProfile& window, std::chrono::milliseconds* retry_after) {
    HttpRequest req;
    req.method = "POST";
    req.target = url_.prefix + std::string(kPushPath);
    req.headers = {{"Content-Type", "application/proto"},
                   {"Connect-Protocol-Version", "1"},
                   {"User-Agent", fmt::format("heapprof/{}", kVersion)}};
    if (!options_.bearer_token.empty()) req.headers.emplace_back("Authorization", "Bearer " + options_.bearer_token);
    if (!options_.tenant.empty()) req.headers.emplace_back("X-Scope-OrgID", options_.tenant);
    req.body = EncodePushRequest({&window});
    std::chrono::milliseconds timeout = options_.timeout;
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++stats_.requests;
      if (stopping_) {
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(drain_until_ - Clock::now());
        timeout = std::max(std::chrono::milliseconds(1), std::min(timeout, left));
      }
    }
    Result<HttpResponse> res =
        url_.tls ? SendHttps(url_.server, req, timeout, {options_.ca_file}) : SendHttp(url_.server, req, timeout);
    if (!res.ok()) return Error(ErrorCode::kUnavailable, res.status().message());
    int status = res->status;
    if (status >= 200 && status < 300) return Status::Ok();
    std::string message = fmt::format("HTTP {}: {}", status, BodyExcerpt(res->body));
    if (status == 408 || status == 429 || status >= 500) {
      for (const auto& [name, value] : res->headers) {
        if (EqualsIgnoreCase(name, "retry-after")) {
          char* end = nullptr;
          long seconds = std::strtol(value.c_str(), &end, 10);
          if (end != value.c_str() && *end == '\0' && seconds > 0) *retry_after = std::chrono::seconds(seconds);
        }
      }
      return Error(ErrorCode::kUnavailable, message);
    }
    return Error(ErrorCode::kInvalidArgument, message);
  }

  void Log(const std::string& line) {
    if (options_.log) options_.log(line);
  }

  std::string Describe() const {
    return fmt::format(
        "{}://{}:{}{}", url_.tls ? "https" : "http",
        url_.server.host.find(':') != std::string::npos ? "[" + url_.server.host + "]" : url_.server.host,
        url_.server.port, url_.prefix);
  }

  void Stop(std::chrono::milliseconds drain) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!stopping_) {
        stopping_ = true;
        drain_until_ = Clock::now() + drain;
      }
    }
    cv_.notify_all();
    if (thread_.joinable()) thread_.join();
  }

  PushOptions options_;
  PushUrl url_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<PushProfile> queue_;
  uint64_t queued_bytes_ = 0;
  bool stopping_ = false;
  bool dropping_ = false;  // a run of drops has been logged
  Clock::time_point drain_until_;
  std::string pending_log_;
  PushStats stats_;
  std::thread thread_;
};

Result<std::unique_ptr<Pusher>> Pusher::Start(PushOptions options) {
  HEAPPROF_ASSIGN_OR_RETURN(PushUrl url, ParsePushUrl(options.url));
  if (!options.ca_file.empty() && !url.tls) {
    return Error(ErrorCode::kInvalidArgument, "a CA file verifies an https:// store; the push URL is http://");
  }
  if (!options.ca_file.empty()) {  // read now: a bad file is an error up front, not a retried push
    std::FILE* f = std::fopen(options.ca_file.c_str(), "rb");
    if (f == nullptr)
      return Error(ErrorCode::kInvalidArgument, "the push's CA file " + options.ca_file + " cannot be read");
    std::fclose(f);
  }
  if (options.max_queued == 0) return Error(ErrorCode::kInvalidArgument, "the push queue needs room for a window");
  auto impl = std::make_unique<Impl>(std::move(options), std::move(url));
  Impl* raw = impl.get();
  raw->thread_ = std::thread([raw] { raw->Run(); });
  return std::unique_ptr<Pusher>(new Pusher(std::move(impl)));
}

Pusher::Pusher(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Pusher::~Pusher() { Stop(std::chrono::milliseconds(0)); }

void Pusher::Enqueue(PushProfile window) { impl_->Enqueue(std::move(window)); }
void Pusher::Stop(std::chrono::milliseconds drain) { impl_->Stop(drain); }

PushStats Pusher::Stats() const {
  std::lock_guard<std::mutex> lock(impl_->mu_);
  PushStats s = impl_->stats_;
  s.queued = impl_->queue_.size();
  s.queued_bytes = impl_->queued_bytes_;
  return s;
}

std::string Pusher::Describe() const { return impl_->Describe(); }

}  // namespace heapprof::remote
