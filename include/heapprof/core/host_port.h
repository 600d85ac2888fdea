// HOST:PORT, the one parser of it: listen addresses (heapprof serve --listen,
// the debug endpoints) and inspector addresses (heapprof attach) both read
// "127.0.0.1:8787", "[::1]:9229", "localhost:0".
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "heapprof/core/status.h"

namespace heapprof {

struct HostPort {
  std::string host;  // an IPv6 address without its brackets
  uint16_t port = 0;
};

// What port 0 means to the caller: a listener lets the system pick a free
// port; a client has nothing to connect to.
enum class PortZero { kPicksFreePort, kInvalid };

// Splits HOST:PORT at the last ':'; an IPv6 host is bracketed ("[::1]:80").
// The host must be non-empty; an unbracketed host holds no ':'; the port is
// decimal, up to 65535 (0 only with PortZero::kPicksFreePort). The error
// (kInvalidArgument) says which part is wrong; callers prefix what the text was.
Result<HostPort> ParseHostPort(std::string_view text, PortZero port_zero);

}  // namespace heapprof
