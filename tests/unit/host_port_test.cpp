#include "heapprof/core/host_port.h"

#include <catch2/catch.hpp>

namespace heapprof {
namespace {

TEST_CASE("host:port: one parser, and port 0 picks a free port for a listener but is no address for a client",
          "[host_port]") {
  Result<HostPort> a = ParseHostPort("127.0.0.1:8787", PortZero::kInvalid);
  REQUIRE(a.ok());
  CHECK(a->host == "127.0.0.1");
  CHECK(a->port == 8787);
  Result<HostPort> v6 = ParseHostPort("[::1]:9229", PortZero::kInvalid);
  REQUIRE(v6.ok());
  CHECK(v6->host == "::1");
  CHECK(v6->port == 9229);

  CHECK(ParseHostPort("127.0.0.1:0", PortZero::kPicksFreePort).ok());
  Result<HostPort> zero = ParseHostPort("127.0.0.1:0", PortZero::kInvalid);
  REQUIRE_FALSE(zero.ok());
  CHECK(zero.status().message() == "the port must be a number from 1 to 65535");

  for (PortZero z : {PortZero::kPicksFreePort, PortZero::kInvalid}) {
    CHECK_FALSE(ParseHostPort("8787", z).ok());
    CHECK_FALSE(ParseHostPort(":80", z).ok());
    CHECK_FALSE(ParseHostPort("[]:80", z).ok());
    CHECK_FALSE(ParseHostPort("[::1:80", z).ok());
    CHECK_FALSE(ParseHostPort("::1:80", z).ok());  // IPv6 needs its brackets
    CHECK_FALSE(ParseHostPort("host:", z).ok());
    CHECK_FALSE(ParseHostPort("host:65536", z).ok());
    CHECK_FALSE(ParseHostPort("host:-1", z).ok());
    CHECK_FALSE(ParseHostPort("host:80x", z).ok());
    CHECK(ParseHostPort("host:65535", z).ok());
  }
}

}  // namespace
}  // namespace heapprof
