// /debug/heapprof/leaks (JSON) and /debug/heapprof/leaks.html (the page):
// a target's leak session report, under the same tokens and target scoping
// as the profiles (a token sees only its own targets' verdicts).
#include <fmt/format.h>

#include "heapprof/http/leak_page.h"
#include "heapprof/http/pprof_endpoints.h"

namespace heapprof {

HttpResponse PprofEndpoints::LeaksResponse(const HttpRequest& request, const Caller& caller, bool page) {
  Result<ParsedTarget> parsed = ParseRequestTarget(request.target);
  if (!parsed.ok()) return TextResponse(400, parsed.status().message());
  auto it = parsed->query.find("target");
  HttpResponse refusal;
  std::optional<std::string> target =
      ResolveTarget(caller, it == parsed->query.end() ? std::string() : it->second, &refusal);
  if (!target) return refusal;
  Result<std::string> json = source_.LeakReportJson(*target);
  if (!json.ok()) {
    const ErrorCode code = json.status().code();
    HttpResponse r = TextResponse(code == ErrorCode::kNotFound      ? 404
                                  : code == ErrorCode::kUnavailable ? 503
                                                                    : 500,
                                  json.status().message());
    // Not yet two snapshots: the next comes within the session's cadence.
    if (code == ErrorCode::kUnavailable) r.headers.emplace_back("Retry-After", "1");
    return r;
  }
  HttpResponse r;
  r.headers.emplace_back("X-Heapprof-Target", *target);
  r.headers.emplace_back("Cache-Control", "no-store");  // each read is a new look at a live session
  if (!page) {
    r.headers.emplace_back("Content-Type", "application/json");
    r.body = std::move(json.value());
    return r;
  }
  Result<std::string> html = internal::RenderLeakPage(json.value(), *target);
  if (!html.ok()) return TextResponse(500, html.status().message());
  r.headers.emplace_back("Content-Type", "text/html; charset=utf-8");
  r.body = std::move(html.value());
  return r;
}

}  // namespace heapprof
