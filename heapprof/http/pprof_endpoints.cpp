// The net/http/pprof-style debug endpoints: parse, route to the profile
// source, encode off the isolate's thread, answer.
#include "heapprof/core/text.h"
#include "heapprof/pprof_endpoints.h"

#include <cctype>
#include <charconv>
#include <filesystem>
#include <utility>

#include <fmt/format.h>

#include "heapprof/core/flamegraph_page.h"
#include "heapprof/file_io.h"
#include "heapprof/flamegraph.h"
#include "heapprof/pprof.h"
#include "heapprof/units.h"

namespace heapprof {
namespace {

namespace fs = std::filesystem;
using internal::EscapeMarkup;

constexpr std::string_view kHeap = "/debug/pprof/heap";
constexpr std::string_view kAllocs = "/debug/pprof/allocs";
constexpr std::string_view kIndex = "/debug/pprof/";
constexpr std::string_view kFlamegraph = "/debug/heapprof/flamegraph";
constexpr std::string_view kCaptures = "/debug/heapprof/captures/";

int HttpStatusFor(const Status& s) {
  switch (s.code()) {
    case ErrorCode::kInvalidArgument: return 400;
    case ErrorCode::kNotFound: return 404;
    case ErrorCode::kFailedPrecondition: return 409;
    case ErrorCode::kUnavailable: return 503;
    default: return 500;
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

// `seconds` as Go's handlers take it (an integer), or a duration such as 500ms.
Result<std::chrono::nanoseconds> ParseSeconds(std::string_view text, std::chrono::seconds max) {
  int64_t ns = 0;
  int64_t whole = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), whole);
  if (ec == std::errc() && end == text.data() + text.size()) {
    if (whole <= 0 || whole > max.count()) {
      return Error(ErrorCode::kInvalidArgument,
                   fmt::format("seconds must be between 1 and {}, not {}", max.count(), text));
    }
    ns = whole * 1'000'000'000;
  } else {
    Result<int64_t> d = ParseDuration(text);
    if (!d.ok() || d.value() <= 0) {
      return Error(ErrorCode::kInvalidArgument,
                   fmt::format("seconds must be a whole number of seconds or a duration such as 500ms, not '{}'", text));
    }
    if (d.value() > std::chrono::nanoseconds(max).count()) {
      return Error(ErrorCode::kInvalidArgument, fmt::format("seconds must be at most {}", max.count()));
    }
    ns = d.value();
  }
  return std::chrono::nanoseconds(ns);
}

}  // namespace

Result<std::string> PercentDecode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '+') {
      out += ' ';
    } else if (c == '%') {
      unsigned value = 0;
      if (i + 2 >= text.size()) {
        return Error(ErrorCode::kInvalidArgument, "truncated %-escape in the URL");
      }
      auto [end, ec] = std::from_chars(text.data() + i + 1, text.data() + i + 3, value, 16);
      if (ec != std::errc() || end != text.data() + i + 3) {
        return Error(ErrorCode::kInvalidArgument, "bad %-escape in the URL");
      }
      out += static_cast<char>(value);
      i += 2;
    } else {
      out += c;
    }
  }
  return out;
}

Result<ParsedTarget> ParseRequestTarget(std::string_view target) {
  ParsedTarget out;
  size_t q = target.find('?');
  HEAPPROF_ASSIGN_OR_RETURN(out.path, PercentDecode(target.substr(0, q)));
  if (q == std::string_view::npos) return out;
  std::string_view query = target.substr(q + 1);
  while (!query.empty()) {
    size_t amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view() : query.substr(amp + 1);
    if (pair.empty()) continue;
    size_t eq = pair.find('=');
    HEAPPROF_ASSIGN_OR_RETURN(std::string key, PercentDecode(pair.substr(0, eq)));
    HEAPPROF_ASSIGN_OR_RETURN(std::string value,
                              PercentDecode(eq == std::string_view::npos ? std::string_view() : pair.substr(eq + 1)));
    out.query[std::move(key)] = std::move(value);
  }
  return out;
}

Status SetDefaultSampleType(heapprof::Profile& profile, std::string_view sample_type) {
  int index = profile.FindSampleType(sample_type);
  if (index < 0) return Error(ErrorCode::kInvalidArgument, fmt::format("the profile has no sample type {}", sample_type));
  profile.default_sample_type = profile.sample_types[static_cast<size_t>(index)].type;
  return Status::Ok();
}

PprofEndpoints::PprofEndpoints(ProfileSource& source, const PprofEndpointOptions& options)
    : source_(source), options_(options) {}

bool PprofEndpoints::Handles(std::string_view target) {
  std::string_view path = target.substr(0, target.find('?'));
  return path == kHeap || path == kAllocs || path == kIndex || path == "/debug/pprof" || path == kFlamegraph ||
         (path.starts_with(kCaptures) && path.size() > kCaptures.size());
}

HttpResponse PprofEndpoints::Handle(const HttpRequest& request) {
  if (request.method != "GET" && request.method != "HEAD") {
    HttpResponse r = TextResponse(405, "the debug endpoints answer GET only");
    r.headers.emplace_back("Allow", "GET, HEAD");
    return r;
  }
  Result<ParsedTarget> parsed = ParseRequestTarget(request.target);
  if (!parsed.ok()) return ErrorResponse(parsed.status());
  const std::string& path = parsed->path;
  if (path == kHeap) return ProfileResponse(request, "heap");
  if (path == kAllocs) return ProfileResponse(request, "allocs");
  if (path == kFlamegraph) return ProfileResponse(request, "flamegraph");
  if (path == kIndex || path == "/debug/pprof") return Index();
  if (path.starts_with(kCaptures)) return CaptureFileResponse(std::string_view(path).substr(kCaptures.size()));
  return TextResponse(404, fmt::format("no debug endpoint {} (see {})", path, kIndex));
}

HttpResponse PprofEndpoints::ProfileResponse(const HttpRequest& request, std::string_view kind) {
  ParsedTarget parsed = ParseRequestTarget(request.target).value();
  auto param = [&](const char* key) -> std::string {
    auto it = parsed.query.find(key);
    return it == parsed.query.end() ? std::string() : it->second;
  };

  // Which target: by name, by replica number, or the only one there is.
  std::vector<TargetStatus> targets = source_.Targets();
  std::string names;
  for (const TargetStatus& t : targets) names += (names.empty() ? "" : ", ") + t.name;
  std::string target = param("target");
  if (target.empty()) {
    if (targets.size() != 1) {
      return TextResponse(400, fmt::format("there are {} targets; name one with target= (by name or number): {}",
                                           targets.size(), names));
    }
    target = targets.front().name;
  } else {
    bool known = false;
    for (const TargetStatus& t : targets) known = known || t.name == target;
    size_t index = 0;
    auto [end, ec] = std::from_chars(target.data(), target.data() + target.size(), index);
    if (!known && ec == std::errc() && end == target.data() + target.size() && index < targets.size()) {
      target = targets[index].name;
      known = true;
    }
    if (!known) return TextResponse(404, fmt::format("no target named {} (the targets are {})", target, names));
  }

  std::string seconds_text = param("seconds");
  Result<heapprof::Profile> profile = Error(ErrorCode::kInternal, "not run");
  if (seconds_text.empty()) {
    if (!options_.continuous) {
      return TextResponse(400, "add ?seconds=N for a window of N seconds (without seconds, heapprof serve "
                               "--continuous returns what the sampler has seen since the window opened)");
    }
    profile = source_.SinceContinuousStart(target);
  } else {
    Result<std::chrono::nanoseconds> duration = ParseSeconds(seconds_text, options_.max_window);
    if (!duration.ok()) return ErrorResponse(duration.status());
    if (options_.continuous) {
      return TextResponse(409, fmt::format("{} is held by the continuous window (--continuous); ask without "
                                           "seconds= for what it has seen since it opened",
                                           target));
    }
    std::string holder = fmt::format("{} {} from {}", request.method, request.target, request.remote);
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto [it, inserted] = holders_.emplace(target, holder);
      if (!inserted) {
        return TextResponse(409, fmt::format("{} already has a window open: {}; one window per target at a time",
                                             target, it->second));
      }
    }
    profile = source_.Window(target, duration.value());
    std::lock_guard<std::mutex> lock(mu_);
    holders_.erase(target);
  }
  if (!profile.ok()) return ErrorResponse(profile.status());

  // Build and encode here, on the endpoint's thread, never on the isolate's.
  if (kind == "flamegraph") {
    FlamegraphOptions fo;
    fo.sample_type = param("sample").empty() ? "inuse_space" : param("sample");
    fo.title = fmt::format("heapprof: {}", target);
    Result<std::string> html = RenderFlamegraphHtml(profile.value(), fo);
    if (!html.ok()) return ErrorResponse(html.status());
    HttpResponse r;
    r.headers.emplace_back("Content-Type", "text/html; charset=utf-8");
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
  r.body = std::move(gz.value());
  return r;
}

HttpResponse PprofEndpoints::Index() {
  std::string html =
      "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>/debug/pprof/</title></head><body>\n"
      "<h1>heapprof: /debug/pprof/</h1>\n<table border=\"1\" cellpadding=\"4\">\n"
      "<tr><th>target</th><th>heap used</th><th>heap limit</th><th>requests</th><th>failures</th>"
      "<th>restarts</th><th>profile</th></tr>\n";
  std::string seconds = options_.continuous ? "" : "seconds=10&amp;";
  for (const TargetStatus& t : source_.Targets()) {
    std::string q = seconds + "target=" + QueryEscape(t.name);
    html += fmt::format(
        "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td><a href=\"heap?{q}\">heap</a> <a href=\"allocs?{q}\">allocs</a> "
        "<a href=\"../heapprof/flamegraph?{q}\">flamegraph</a></td></tr>\n",
        EscapeMarkup(t.name), MiB(t.heap_used_bytes), MiB(t.heap_limit_bytes), t.requests, t.failures, t.restarts,
        fmt::arg("q", q));
  }
  html += "</table>\n<h2>Near-heap-limit captures</h2>\n<ul>\n";
  std::vector<CaptureFile> captures = source_.Captures();
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

HttpResponse PprofEndpoints::CaptureFileResponse(std::string_view name) {
  for (const CaptureFile& c : source_.Captures()) {
    if (fs::path(c.path).filename().string() != name) continue;
    Result<std::string> bytes = ReadFileBytes(c.path);
    if (!bytes.ok()) return ErrorResponse(bytes.status());
    HttpResponse r;
    r.headers.emplace_back("Content-Type", "application/octet-stream");
    r.headers.emplace_back("Content-Disposition", fmt::format("attachment; filename=\"{}\"", name));
    r.body = std::move(bytes.value());
    return r;
  }
  return TextResponse(404, fmt::format("no capture named {} (the index at {} lists them)", name, kIndex));
}

}  // namespace heapprof
