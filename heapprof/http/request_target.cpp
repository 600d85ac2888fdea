// A request target's path and query, percent-decoded (pprof_endpoints.h).
#include <charconv>
#include <string>
#include <string_view>
#include <utility>

#include "heapprof/http/pprof_endpoints.h"

namespace heapprof {

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

}  // namespace heapprof
