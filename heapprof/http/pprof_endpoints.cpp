// The net/http/pprof-style debug endpoints: parse, route to the profile
// source, encode off the isolate's thread, answer.
#include "heapprof/http/pprof_endpoints.h"
#include "heapprof/core/text.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <ctime>
#include <filesystem>
#include <utility>

#include <fmt/format.h>

#include "heapprof/core/file_io.h"
#include "heapprof/core/flamegraph.h"
#include "heapprof/core/pprof.h"
#include "heapprof/core/report.h"
#include "heapprof/core/units.h"
#include "heapprof/http/shown_text.h"

namespace heapprof {
namespace {

// A header value in ASCII: "±" becomes "+/-", other bytes outside printable ASCII '?'.
std::string HeaderSafe(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == 0xC2 && i + 1 < text.size() && static_cast<unsigned char>(text[i + 1]) == 0xB1) {
      out += "+/-";
      ++i;
    } else if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else if (c < 0x80 || (c & 0xC0) != 0x80) {
      out += '?';
    }
  }
  return out;
}

namespace fs = std::filesystem;
using internal::EscapeMarkup;
using internal::Shown;

constexpr std::string_view kHeap = "/debug/pprof/heap";
constexpr std::string_view kAllocs = "/debug/pprof/allocs";
constexpr std::string_view kIndex = "/debug/pprof/";
constexpr std::string_view kFlamegraph = "/debug/heapprof/flamegraph";
constexpr std::string_view kCaptures = "/debug/heapprof/captures/";
constexpr std::string_view kWindows = "/debug/heapprof/windows/";
constexpr std::string_view kLeaks = "/debug/heapprof/leaks";
constexpr std::string_view kLeaksPage = "/debug/heapprof/leaks.html";

int HttpStatusFor(const Status& s) {
  switch (s.code()) {
    case ErrorCode::kInvalidArgument:
      return 400;
    case ErrorCode::kNotFound:
      return 404;
    case ErrorCode::kFailedPrecondition:
      return 409;
    case ErrorCode::kUnavailable:
      return 503;
    default:
      return 500;
  }
}

HttpResponse ErrorResponse(const Status& s) { return TextResponse(HttpStatusFor(s), s.message()); }

std::string QueryEscape(std::string_view text) {
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += fmt::format("%{:02X}", c);
    }
  }
  return out;
}

std::string MiB(uint64_t bytes) { return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1024.0 * 1024.0)); }

std::string DurationText(std::chrono::nanoseconds d) {
  int64_t ns = d.count();
  if (ns % 1'000'000'000 == 0) return fmt::format("{}s", ns / 1'000'000'000);
  if (ns % 1'000'000 == 0) return fmt::format("{}ms", ns / 1'000'000);
  return fmt::format("{}ns", ns);
}

bool AllDigits(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// `seconds` as Go's handlers take it (a whole number of seconds), or a
// duration with its unit such as 500ms, within [min, max]. Nothing else: no
// sign, no bare fraction, no spaces.
Result<std::chrono::nanoseconds> ParseSeconds(std::string_view text, std::chrono::nanoseconds min,
                                              std::chrono::nanoseconds max) {
  auto bad = [&] {
    return Error(ErrorCode::kInvalidArgument,
                 fmt::format("seconds must be a whole number of seconds or a duration with its unit such as 500ms, "
                             "from {} to {}; not '{}'",
                             DurationText(min), DurationText(max), Shown(text)));
  };
  int64_t ns = 0;
  if (AllDigits(text)) {
    if (text.size() > 9) return bad();
    ns = std::stoll(std::string(text)) * 1'000'000'000;
  } else {
    if (text.empty() || !(text.front() >= '0' && text.front() <= '9') ||
        !std::isalpha(static_cast<unsigned char>(text.back())) ||
        std::any_of(text.begin(), text.end(), [](char c) { return c == ' ' || c == '+' || c == '-'; })) {
      return bad();
    }
    Result<int64_t> d = ParseDuration(text);
    if (!d.ok()) return bad();
    ns = d.value();
  }
  if (ns < min.count() || ns > max.count()) return bad();
  return std::chrono::nanoseconds(ns);
}

std::string UtcTime(std::chrono::system_clock::time_point t) {
  std::time_t secs = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return buf;
}

HttpResponse TooMany(std::string text, int64_t retry_after_seconds) {
  HttpResponse r = TextResponse(429, text);
  r.headers.emplace_back("Retry-After", std::to_string(std::max<int64_t>(1, retry_after_seconds)));
  return r;
}

}  // namespace

Status SetDefaultSampleType(heapprof::Profile& profile, std::string_view sample_type) {
  int index = profile.FindSampleType(sample_type);
  if (index < 0)
    return Error(ErrorCode::kInvalidArgument, fmt::format("the profile has no sample type {}", sample_type));
  profile.default_sample_type = profile.sample_types[static_cast<size_t>(index)].type;
  return Status::Ok();
}

PprofEndpoints::PprofEndpoints(ProfileSource& source, const PprofEndpointOptions& options)
    : source_(source), options_(options) {}

std::vector<OpenWindow> PprofEndpoints::OpenWindows() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<OpenWindow> out;
  for (const auto& [id, held] : windows_) out.push_back(held.info);
  return out;
}

bool PprofEndpoints::Handles(std::string_view target) {
  std::string_view path = target.substr(0, target.find('?'));
  return path == kHeap || path == kAllocs || path == kIndex || path == "/debug/pprof" || path == kFlamegraph ||
         path == kLeaks || path == kLeaksPage || (path.starts_with(kCaptures) && path.size() > kCaptures.size()) ||
         (path.starts_with(kWindows) && path.size() > kWindows.size());
}

HttpResponse PprofEndpoints::Handle(const HttpRequest& request) {
  Result<Caller> caller = Authenticate(request);
  if (!caller.ok()) {
    HttpResponse r = TextResponse(401, caller.status().message());
    r.headers.emplace_back("WWW-Authenticate", "Bearer");
    return r;
  }
  Result<ParsedTarget> parsed = ParseRequestTarget(request.target);
  if (!parsed.ok()) return ErrorResponse(parsed.status());
  const std::string& path = parsed->path;
  if (path.starts_with(kWindows)) {
    if (request.method != "DELETE") {
      HttpResponse r = TextResponse(405, "a window is ended with DELETE");
      r.headers.emplace_back("Allow", "DELETE");
      return r;
    }
    return CancelWindow(caller.value(), std::string_view(path).substr(kWindows.size()));
  }
  if (request.method != "GET" && request.method != "HEAD") {
    HttpResponse r = TextResponse(405, "the debug endpoints answer GET only");
    r.headers.emplace_back("Allow", "GET, HEAD");
    return r;
  }
  if (path == kHeap) return ProfileResponse(request, caller.value(), "heap");
  if (path == kAllocs) return ProfileResponse(request, caller.value(), "allocs");
  if (path == kFlamegraph) return ProfileResponse(request, caller.value(), "flamegraph");
  if (path == kLeaks || path == kLeaksPage) return LeaksResponse(request, caller.value(), path == kLeaksPage);
  if (path == kIndex || path == "/debug/pprof") return Index(caller.value());
  if (path.starts_with(kCaptures)) {
    return CaptureFileResponse(caller.value(), std::string_view(path).substr(kCaptures.size()));
  }
  return TextResponse(404, fmt::format("no debug endpoint {} (see {})", Shown(path), kIndex));
}

HttpResponse PprofEndpoints::CancelWindow(const Caller& caller, std::string_view id_text) {
  uint64_t id = 0;
  auto [end, ec] = std::from_chars(id_text.data(), id_text.data() + id_text.size(), id);
  std::shared_ptr<CancelSignal> cancel;
  std::string target;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = ec == std::errc() && end == id_text.data() + id_text.size() ? windows_.find(id) : windows_.end();
    // Another client's window is as unknown as none: no hint of what others do.
    if (it == windows_.end() || it->second.info.client != caller.client) {
      return TextResponse(
          404, fmt::format("no window {} of yours is open (the index at {} lists them)", Shown(id_text), kIndex));
    }
    cancel = it->second.cancel;
    target = it->second.info.target;
  }
  cancel->Cancel();
  return TextResponse(200,
                      fmt::format("window {} on {} ended; its request gets the profile of what it saw", id, target));
}

uint64_t PprofEndpoints::Admit(const HttpRequest& request, const Caller& caller, const std::string& target,
                               std::chrono::nanoseconds duration, std::shared_ptr<CancelSignal> cancel,
                               HttpResponse* refusal) {
  using namespace std::chrono;
  std::lock_guard<std::mutex> lock(mu_);
  // Windows on one target overlap (each is a range of ids over the target's
  // always-on sampler): only the per-client bounds below apply.
  size_t held_by_caller = 0;
  system_clock::time_point soonest = system_clock::time_point::max();
  for (const auto& [id, held] : windows_) {
    if (held.info.client != caller.client) continue;
    ++held_by_caller;
    soonest = std::min(soonest, held.info.ends);
  }
  if (held_by_caller >= options_.max_windows_per_client) {
    *refusal = TooMany(fmt::format("{} holds {} windows, the most one client may hold at once; wait for one to end "
                                   "or end one (DELETE {}ID)",
                                   caller.client, held_by_caller, kWindows),
                       duration_cast<seconds>(soonest - system_clock::now()).count() + 1);
    return 0;
  }
  auto now = steady_clock::now();
  std::deque<steady_clock::time_point>& recent = opened_[caller.client];
  while (!recent.empty() && now - recent.front() >= minutes(1)) recent.pop_front();
  if (recent.size() >= options_.windows_per_minute) {
    *refusal = TooMany(
        fmt::format("{} opened {} windows in the last minute, the most one client may", caller.client, recent.size()),
        duration_cast<seconds>(recent.front() + minutes(1) - now).count() + 1);
    return 0;
  }
  recent.push_back(now);
  // Forget clients with nothing recent, so many addresses leave nothing behind.
  for (auto it = opened_.begin(); it != opened_.end();) {
    while (!it->second.empty() && now - it->second.front() >= minutes(1)) it->second.pop_front();
    it = it->second.empty() ? opened_.erase(it) : std::next(it);
  }
  uint64_t id = next_window_++;
  Held held;
  held.info.id = id;
  held.info.target = target;
  held.info.client = caller.client;
  held.info.request = caller.token
                          ? fmt::format("{} {} by {}", request.method, Shown(request.target), caller.client)
                          : fmt::format("{} {} from {}", request.method, Shown(request.target), request.remote);
  held.info.started = system_clock::now();
  held.info.ends = held.info.started + duration_cast<system_clock::duration>(duration);
  held.cancel = std::move(cancel);
  windows_.emplace(id, std::move(held));
  return id;
}

std::optional<std::string> PprofEndpoints::ResolveTarget(const Caller& caller, const std::string& requested,
                                                         HttpResponse* refusal) {
  // Which target: by name, by replica number, or the only one there is. A
  // token sees only its own targets: the others are neither listed nor told
  // apart from names that do not exist.
  std::vector<TargetStatus> targets;
  for (TargetStatus& t : source_.Targets()) {
    if (caller.May(t.name)) targets.push_back(std::move(t));
  }
  std::vector<TargetStatus> all = source_.Targets();
  std::string names;
  for (const TargetStatus& t : targets) names += (names.empty() ? "" : ", ") + t.name;
  std::string target = requested;
  if (target.empty()) {
    if (targets.size() != 1) {
      *refusal = TextResponse(400, fmt::format("there are {} targets; name one with target= (by name or number): {}",
                                               targets.size(), names));
      return std::nullopt;
    }
    return targets.front().name;
  }
  bool known = false;
  for (const TargetStatus& t : all) known = known || t.name == target;
  // Another name of a target (a named Durable Object's NS:<hex id>), in either case.
  for (const TargetStatus& t : all) {
    for (const std::string& alias : t.aliases) {
      if (known) break;
      if (alias.size() == target.size() && std::equal(alias.begin(), alias.end(), target.begin(), [](char a, char b) {
            return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
          })) {
        target = t.name;
        known = true;
      }
    }
  }
  size_t index = 0;
  auto [end, ec] = std::from_chars(target.data(), target.data() + target.size(), index);
  if (!known && ec == std::errc() && end == target.data() + target.size() && index < all.size()) {
    target = all[index].name;
    known = true;
  }
  if (caller.token && (!known || !caller.May(target))) {
    *refusal = TextResponse(403, fmt::format("the token {} may not profile {}", caller.client, Shown(requested)));
    return std::nullopt;
  }
  if (!known) {
    *refusal = TextResponse(404, fmt::format("no target named {} (the targets are {})", Shown(target), names));
    return std::nullopt;
  }
  return target;
}

HttpResponse PprofEndpoints::ProfileResponse(const HttpRequest& request, const Caller& caller, std::string_view kind) {
  ParsedTarget parsed = ParseRequestTarget(request.target).value();
  auto param = [&](const char* key) -> std::string {
    auto it = parsed.query.find(key);
    return it == parsed.query.end() ? std::string() : it->second;
  };

  HttpResponse bad_target;
  std::optional<std::string> resolved = ResolveTarget(caller, param("target"), &bad_target);
  if (!resolved) return bad_target;
  const std::string target = std::move(*resolved);

  std::string seconds_text = param("seconds");
  Result<heapprof::Profile> profile = Error(ErrorCode::kInternal, "not run");
  bool ended_early = false;
  if (seconds_text.empty()) {
    if (!options_.continuous) {
      return TextResponse(400,
                          "add ?seconds=N for a window of N seconds (without seconds, heapprof serve "
                          "--continuous returns what the sampler has seen since the window opened)");
    }
    profile = source_.SinceContinuousStart(target);
  } else {
    Result<std::chrono::nanoseconds> duration = ParseSeconds(seconds_text, options_.min_window, options_.max_window);
    if (!duration.ok()) return ErrorResponse(duration.status());
    if (options_.continuous) {
      return TextResponse(409, fmt::format("{} is held by the continuous window (--continuous); ask without "
                                           "seconds= for what it has seen since it opened",
                                           target));
    }
    auto cancel = std::make_shared<CancelSignal>();
    HttpResponse refusal;
    uint64_t id = Admit(request, caller, target, duration.value(), cancel, &refusal);
    if (id == 0) return refusal;
    // The client leaving ends its window: nobody would read the profile.
    uint64_t gone = request.client_gone ? request.client_gone->OnCancel([cancel] { cancel->Cancel(); }) : 0;
    profile = source_.Window(target, duration.value(), *cancel);
    if (request.client_gone) request.client_gone->Remove(gone);
    {
      std::lock_guard<std::mutex> lock(mu_);
      windows_.erase(id);
    }
    if (request.client_gone && request.client_gone->cancelled()) {
      return TextResponse(499, "the client closed the connection; the window ended");
    }
    ended_early = cancel->cancelled();
  }
  if (!profile.ok()) return ErrorResponse(profile.status());

  // A window with too few samples says so in the profile (its comments, which
  // the flamegraph page lists and `go tool pprof -comments` prints) and in a
  // header, as heapprof run's tables do; the page warns above the graph too.
  std::string warning;
  for (const char* type : {"inuse_space", "alloc_space"}) {
    int index = profile->FindSampleType(type);
    if (index < 0) continue;
    std::string few = TooFewSamples(profile.value(), index);
    if (few.empty()) continue;
    few += fmt::format("; scrape a longer window (seconds=) or serve with --interval {} (this window: {})",
                       FormatInterval(CheckSampling(profile.value(), index).suggested_interval),
                       FormatInterval(profile->period));
    profile->comments.push_back(profile->AddString("sampling_warning: " + few));
    if (warning.empty()) warning = few;
  }

  // Build and encode here, on the endpoint's thread, never on the isolate's.
  if (kind == "flamegraph") {
    FlamegraphOptions fo;
    fo.sample_type = param("sample").empty() ? "inuse_space" : param("sample");
    fo.title = fmt::format("heapprof: {}", target);
    Result<std::string> html = RenderFlamegraphHtml(profile.value(), fo);
    if (!html.ok()) return ErrorResponse(html.status());
    HttpResponse r;
    r.headers.emplace_back("Content-Type", "text/html; charset=utf-8");
    if (!warning.empty()) r.headers.emplace_back("X-Heapprof-Warning", HeaderSafe(warning));
    r.body = std::move(html.value());
    return r;
  }
  if (Status s = SetDefaultSampleType(profile.value(), kind == "allocs" ? "alloc_space" : "inuse_space"); !s.ok()) {
    return ErrorResponse(s);
  }
  Result<std::string> gz = EncodePprofGzip(profile.value(), 1);  // Go's level: fast, for a client that waits
  if (!gz.ok()) return ErrorResponse(gz.status());
  HttpResponse r;
  r.headers.emplace_back("Content-Type", "application/octet-stream");
  r.headers.emplace_back("Content-Disposition", fmt::format("attachment; filename=\"{}\"", kind));
  r.headers.emplace_back("X-Heapprof-Target", target);
  if (ended_early) r.headers.emplace_back("X-Heapprof-Window", "cancelled");
  // A window cut short when its target's isolate ended (a replica restart):
  // the profile has what it saw until then, and says so here and in a comment.
  if (std::string end = profile->CommentValue("window_end"); !end.empty()) {
    r.headers.emplace_back("X-Heapprof-Window-End", end);
  }
  if (!warning.empty()) r.headers.emplace_back("X-Heapprof-Warning", HeaderSafe(warning));
  r.body = std::move(gz.value());
  return r;
}

HttpResponse PprofEndpoints::Index(const Caller& caller) {
  std::string html =
      "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>/debug/pprof/</title></head><body>\n"
      "<h1>heapprof: /debug/pprof/</h1>\n<table border=\"1\" cellpadding=\"4\">\n"
      "<tr><th>target</th><th>heap used</th><th>heap limit</th><th>requests</th><th>failures</th>"
      "<th>restarts</th><th>profile</th></tr>\n";
  std::string seconds = options_.continuous ? "" : "seconds=10&amp;";
  const bool leaks = source_.HasLeakSessions();
  for (const TargetStatus& t : source_.Targets()) {
    if (!caller.May(t.name)) continue;
    std::string q = seconds + "target=" + QueryEscape(t.name);
    html += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td><a href=\"heap?{q}\">heap</a> <a href=\"allocs?{q}\">allocs</a> "
        "<a href=\"../heapprof/flamegraph?{q}\">flamegraph</a>{leaks}</td></tr>\n",
        EscapeMarkup(t.name), MiB(t.heap_used_bytes), MiB(t.heap_limit_bytes), t.requests, t.failures, t.restarts,
        fmt::arg("q", q),
        fmt::arg("leaks",
                 leaks ? fmt::format(" <a href=\"../heapprof/leaks.html?target={}\">leaks</a>", QueryEscape(t.name))
                       : std::string()));
  }
  html += "</table>\n";
  if (options_.index_sections) {
    for (const IndexSection& section : options_.index_sections()) {
      html += fmt::format("<h2>{}</h2>\n<table border=\"1\" cellpadding=\"4\">\n", EscapeMarkup(section.title));
      for (const auto& [name, value] : section.rows) {
        html += fmt::format("<tr><th>{}</th><td>{}</td></tr>\n", EscapeMarkup(name), EscapeMarkup(value));
      }
      html += "</table>\n";
    }
  }
  html += "<h2>Open windows</h2>\n";
  std::vector<OpenWindow> open;
  for (const OpenWindow& w : OpenWindows()) {
    if (caller.May(w.target)) open.push_back(w);
  }
  if (open.empty()) {
    html += "<p>none</p>\n";
  } else {
    html +=
        "<table border=\"1\" cellpadding=\"4\">\n<tr><th>id</th><th>target</th><th>held by</th><th>request</th>"
        "<th>ends</th></tr>\n";
    auto now = std::chrono::system_clock::now();
    for (const OpenWindow& w : open) {
      int64_t left = std::chrono::duration_cast<std::chrono::seconds>(w.ends - now).count();
      html += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{} (in {} s)</td></tr>\n", w.id,
                          EscapeMarkup(w.target), EscapeMarkup(w.client), EscapeMarkup(w.request), UtcTime(w.ends),
                          std::max<int64_t>(0, left));
    }
    html += fmt::format("</table>\n<p>Its holder ends a window with <code>DELETE {}ID</code>.</p>\n", kWindows);
  }
  html += "<h2>Near-heap-limit captures</h2>\n<ul>\n";
  std::vector<CaptureFile> captures;
  for (CaptureFile& c : source_.Captures()) {
    if (caller.May(c.target)) captures.push_back(std::move(c));
  }
  if (captures.empty()) html += "<li>none</li>\n";
  for (const CaptureFile& c : captures) {
    std::string file = fs::path(c.path).filename().string();
    html += fmt::format("<li>{}: <a href=\"../heapprof/captures/{}\">{}</a></li>\n", EscapeMarkup(c.target),
                        QueryEscape(file), EscapeMarkup(file));
  }
  html += fmt::format(
      "</ul>\n<p>{}: <code>go tool pprof http://HOST/debug/pprof/heap?{}target=NAME</code></p>\n</body></html>\n",
      options_.continuous ? "Since the continuous window opened" : "A 10-second window",
      options_.continuous ? "" : "seconds=10&amp;");
  HttpResponse r;
  r.headers.emplace_back("Content-Type", "text/html; charset=utf-8");
  r.body = std::move(html);
  return r;
}

HttpResponse PprofEndpoints::CaptureFileResponse(const Caller& caller, std::string_view name) {
  for (const CaptureFile& c : source_.Captures()) {
    if (fs::path(c.path).filename().string() != name || !caller.May(c.target)) continue;
    Result<std::string> bytes = ReadFileBytes(c.path);
    if (!bytes.ok()) return ErrorResponse(bytes.status());
    HttpResponse r;
    r.headers.emplace_back("Content-Type", "application/octet-stream");
    r.headers.emplace_back("Content-Disposition", fmt::format("attachment; filename=\"{}\"", name));
    r.body = std::move(bytes.value());
    return r;
  }
  return TextResponse(404, fmt::format("no capture named {} (the index at {} lists them)", Shown(name), kIndex));
}

}  // namespace heapprof
