#include "heapprof/core/http_message.h"

#include <algorithm>
#include <cctype>

namespace heapprof {

std::string_view HeaderValue(const HttpHeaders& headers, std::string_view name) {
  auto same = [&](std::string_view n) {
    return n.size() == name.size() && std::equal(n.begin(), n.end(), name.begin(), [](char x, char y) {
             return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
           });
  };
  for (const auto& [n, v] : headers) {
    if (same(n)) return v;
  }
  return {};
}

}  // namespace heapprof
