#include "heapprof/core/host_port.h"

#include <charconv>

namespace heapprof {

Result<HostPort> ParseHostPort(std::string_view text, PortZero port_zero) {
  auto bad = [](const char* why) { return Error(ErrorCode::kInvalidArgument, why); };
  size_t colon = text.rfind(':');
  if (colon == std::string_view::npos) return bad("expected host:port, e.g. 127.0.0.1:8787");
  std::string_view host = text.substr(0, colon);
  std::string_view port_text = text.substr(colon + 1);
  if (!host.empty() && host.front() == '[') {
    if (host.size() < 3 || host.back() != ']') return bad("an IPv6 host is written in brackets, e.g. [::1]:8787");
    host = host.substr(1, host.size() - 2);
  } else if (host.find(':') != std::string_view::npos) {
    return bad("an IPv6 host is written in brackets, e.g. [::1]:8787");
  }
  if (host.empty()) return bad("the host is empty");
  const unsigned min_port = port_zero == PortZero::kPicksFreePort ? 0 : 1;
  unsigned port = 0;
  auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (port_text.empty() || ec != std::errc() || end != port_text.data() + port_text.size() || port < min_port ||
      port > 65535) {
    return bad(min_port == 0 ? "the port must be a number from 0 to 65535"
                             : "the port must be a number from 1 to 65535");
  }
  return HostPort{std::string(host), static_cast<uint16_t>(port)};
}

}  // namespace heapprof
