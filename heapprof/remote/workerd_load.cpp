// The load thread of `heapprof run --runtime workerd` (workerd_load.h).
#include "heapprof/remote/workerd_load.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "heapprof/workload/traffic.h"

namespace heapprof::remote {
namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kFailuresKept = 3;

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

// HTTP header names compare and record in lower case, as Headers iterates them.
std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// workerd's own answer to a handler that threw: 500, "Internal Server Error",
// and the connection closed (a worker's own 500 keeps it open).
bool WorkerdsOwn500(const HttpResponse& r) {
  if (r.status != 500 || r.body != "Internal Server Error") return false;
  return std::any_of(r.headers.begin(), r.headers.end(),
                     [](const auto& h) { return Lower(h.first) == "connection" && Lower(h.second) == "close"; });
}

}  // namespace

void WorkerdLoad::Start() {
  thread_ = std::thread([this] {
    while (!stop_.load()) {
      if (sent_.load() < limit_.load()) {
        Send(sent_.fetch_add(1));
        continue;
      }
      if (kicking_.load() && NowNs() >= next_kick_ns_.load()) {
        // The reserve first; past it (the inspector still waiting) one every
        // 500 ms beyond N, counted, rather than a protocol timeout.
        if (kicks_.load() > 0) {
          kicks_.fetch_sub(1);
          next_kick_ns_.store(NowNs() + 100'000'000);
        } else {
          extra_kicks_.fetch_add(1);
          next_kick_ns_.store(NowNs() + 500'000'000);
        }
        Send(sent_.fetch_add(1));
        continue;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));  // waiting for the next window's share
    }
  });
}

uint64_t WorkerdLoad::Allow(uint64_t more) {
  const uint64_t target = sent_.load() + more;
  limit_.store(target);
  return target;
}

void WorkerdLoad::Kick(uint64_t kicks) {
  next_kick_ns_.store(NowNs() + 20'000'000);
  kicks_.store(kicks);
  kicking_.store(true);
}

void WorkerdLoad::Stop() {
  stop_.store(true);
  if (thread_.joinable()) thread_.join();
}

void WorkerdLoad::Serve(uint64_t n) {
  for (uint64_t i = 0; i < n && !Interrupted(); ++i) Send(sent_.fetch_add(1));
}

uint64_t WorkerdLoad::answered() {
  std::lock_guard lock(mu_);
  return outcomes_.requests();
}

RequestOutcomes WorkerdLoad::outcomes() {
  std::lock_guard lock(mu_);
  return outcomes_;
}

uint64_t WorkerdLoad::no_response() {
  std::lock_guard lock(mu_);
  return no_response_;
}

uint64_t WorkerdLoad::empty_bodies() {
  std::lock_guard lock(mu_);
  return empty_;
}

std::vector<WorkerdLoad::Failure> WorkerdLoad::first_failures() {
  std::lock_guard lock(mu_);
  return failures_;
}

std::string WorkerdLoad::responses() {
  std::lock_guard lock(mu_);
  return responses_;
}

void WorkerdLoad::Send(uint64_t index) {
  const WorkerRequest request = o_.traffic.empty() ? SyntheticRequest(index) : o_.traffic[index % o_.traffic.size()];
  HttpRequest http;
  http.method = request.method;
  // workerd's socket is proxy style: the absolute URL on the request line is
  // the worker's request.url, scheme included, as the embedded host gives it.
  http.target = request.url;
  http.headers = request.headers;
  const bool has_host =
      std::any_of(http.headers.begin(), http.headers.end(), [](const auto& h) { return Lower(h.first) == "host"; });
  if (!has_host) {
    std::string_view url = request.url;
    size_t scheme = url.find("://");
    std::string_view rest = scheme == std::string_view::npos ? url : url.substr(scheme + 3);
    std::string_view host = rest.substr(0, rest.find_first_of("/?#"));
    if (!host.empty()) http.headers.emplace_back("host", std::string(host));
  }
  http.body = request.body;
  Result<HttpResponse> response = SendHttp(o_.server, http, o_.timeout);
  if (Interrupted() && !response.ok()) return;  // cut short by Ctrl-C: not counted
  const bool timed_out = !response.ok() && response.status().code() == ErrorCode::kDeadlineExceeded;
  const std::string timeout_message = fmt::format("no response within --request-timeout {} ms", o_.timeout.count());
  // A handler that threw: workerd logs the exception (its stack with
  // --verbose) before it answers, so it is in the log's newest lines.
  std::vector<WorkerdException> exceptions;
  if (response.ok() && WorkerdsOwn500(response.value()) && o_.exceptions) {
    for (int attempt = 0; attempt < 10 && exceptions.empty(); ++attempt) {
      if (attempt > 0) std::this_thread::sleep_for(std::chrono::milliseconds(10));
      exceptions = o_.exceptions();
    }
  }
  std::lock_guard lock(mu_);
  if (o_.record) {
    Result<WorkerResponse> answer = [&]() -> Result<WorkerResponse> {
      if (timed_out) return Error(ErrorCode::kDeadlineExceeded, timeout_message);
      if (!response.ok()) return response.status();
      WorkerResponse r;
      r.status = response->status;
      for (const auto& [name, value] : response->headers) r.headers.emplace_back(Lower(name), value);
      r.body = response->body;
      return r;
    }();
    responses_ += ResponseRecord(index, request, answer);
    responses_ += '\n';
  }
  const std::string what = request.method + " " + request.url;
  if (!response.ok()) {
    // No answer at all is a timeout (ours) or workerd dropping the connection.
    const std::string message = timed_out ? timeout_message : "no response: " + response.status().message();
    outcomes_.AddFailure(timed_out ? RequestFailure::kTimedOut : RequestFailure::kThrown, message);
    if (!timed_out) ++no_response_;
    if (failures_.size() < kFailuresKept) failures_.push_back({index, what + ": " + message, 0});
    return;
  }
  if (!exceptions.empty()) {
    // The worker's own exception, as the embedded runtime reports one: the
    // request failed (threw, or its promise rejected), it is not an answer.
    const WorkerdException& e = exceptions.front();
    outcomes_.AddFailure(e.rejected ? RequestFailure::kRejected : RequestFailure::kThrown, e.description);
    if (failures_.size() < kFailuresKept) {
      failures_.push_back({index,
                           fmt::format("{} -> 500: {} {}", what, e.rejected ? "rejected:" : "threw:",
                                       e.description.substr(0, e.description.find('\n'))),
                           500});
    }
    return;
  }
  outcomes_.AddResponse(response->status);
  if (response->body.empty()) ++empty_;
  // Only what counted as failed: 5xx. A 404 or 422 is an answer.
  if (response->status >= 500 && failures_.size() < kFailuresKept) {
    failures_.push_back(
        {index, fmt::format("{} -> {}: {}", what, response->status, response->body.substr(0, 200)), response->status});
  }
}

}  // namespace heapprof::remote
