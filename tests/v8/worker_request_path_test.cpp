// The request path's checks of HTTP text, made in C++ instead of regular
// expressions (worker_http_natives.cpp): they accept and refuse what the
// patterns did, and a Request's url is what URL's parse makes of it.
#include <catch2/catch.hpp>

#include <chrono>
#include <string>

#include "heapprof/runtime/worker_natives.h"
#include "heapprof/runtime/worker_runtime.h"
#include "run_fetch_body.h"

using namespace heapprof;

namespace {

// The body of a fetch handler, run once in a fresh runtime; its response's body.
std::string Run(const std::string& body) {
  WorkerRequest request;
  request.url = "https://example.com/a/b?c=d";
  request.headers = {{"X-Mixed-Case", "  padded\t"}, {"accept", "*/*"}};
  return testing::RunFetchBody(body, request, "path.js");
}

}  // namespace

TEST_CASE("an http URL is normal only when its parse would give it back unchanged") {
  using internal::IsNormalHttpHref;
  for (const char* normal : {"https://example.com/", "http://a/", "https://a.b-c.d/x/y.z?q=1&r=%20", "https://a/?",
                             "https://a/?x?y`{}\\", "https://a/..x/.x./%2ex", "https://a/x?.", "http://127.0.0.1:8787/",
                             "http://localhost:8787/x", "https://a:80/", "http://a:443/", "http://a:65535/",
                             "https://1.2.3.4/", "https://0.0.0.0/", "https://a.1b/", "https://x-n--a/"}) {
    INFO(normal);
    CHECK(IsNormalHttpHref(normal));
  }
  for (const char* other : {"",
                            "https://",
                            "https://a",
                            "https:/a/",
                            "ftp://a/",
                            "HTTPS://a/",
                            "https://A/",
                            "https://a:443/",
                            "http://a:80/",
                            "http://a:/",
                            "http://a:08787/",
                            "http://a:65536/",
                            "http://a:123456/",
                            "http://a:1x/",
                            "http://127.1/",
                            "http://1.2.3.4./",
                            "http://1.2.3.04/",
                            "http://1.2.3.256/",
                            "http://1.2.3.4.5/",
                            "http://0x7f.0.0.1/",
                            "http://a.0x1f/",
                            "http://a.0x/",
                            "http://a.1/",
                            "http://a.b.08/",
                            "http://a..b/",
                            "http://.a/",
                            "http://a./",
                            "http://xn--nxasmq6b/",
                            "http://a.xn--a/",
                            "https://u@a/",
                            "https://a/#f",
                            "https://a/ x",
                            "https://a/x\"",
                            "https://a/<",
                            "https://a/>",
                            "https://a/`",
                            "https://a/{",
                            "https://a/}",
                            "https://a/\\",
                            "https://a/?'",
                            "https://a/?#",
                            "https://a/\x7f",
                            "https://a/\xc3\xa9",
                            "https://a/.",
                            "https://a/./x",
                            "https://a/..",
                            "https://a/../x",
                            "https://a/%2e/",
                            "https://a/%2E%2e?",
                            "https://a/.%2E",
                            "https://a/x?/./",
                            "https://./x",
                            "https://a/x/.?y"}) {
    INFO(other);
    CHECK_FALSE(IsNormalHttpHref(other));
  }
}

TEST_CASE("a Request's url is URL's href of its text whether or not the text is already normal") {
  std::string out = Run(R"(
    const texts = ['https://example.com/', 'http://a/x?y=1', 'https://EXAMPLE.com/', 'https://a/./b/../c',
      'https://a/%2e%2E/x', 'https://a:443/', 'https://u:p@a/', 'https://a/x#frag', 'https://a/ x',
      'https://a/\u00e9?\u00e9', 'https://a/x?\'', 'https://a/`{}', 'http://a', 'https://a/x?y/./z',
      'http://127.0.0.1:8787/', 'http://a:80/', 'http://a:08787/x', 'http://a:/', 'http://127.1/', 'http://1.2.3.4./',
      'http://0x7f.0.0.1/', 'http://1.2.3.04/', 'https://a:65535/'];
    const wrong = texts.filter(t => new Request(t).url !== new URL(t).href);
    return new Response(JSON.stringify([request.url, wrong]));
  )");
  CHECK(out == R"(["https://example.com/a/b?c=d",[]])");
  // A normal URL with a port (what a local server's requests have): its parts, as the full parse gives them.
  CHECK(Run(R"(
    const parts = u => [u.href, u.host, u.hostname, u.port, u.origin, u.pathname, u.search].join(' ');
    const fast = new URL('http://127.0.0.1:8787/a?b=1');
    const full = new URL('HTTP://127.0.0.1:8787/a?b=1');
    return new Response(parts(fast) === parts(full) ? parts(fast) : parts(fast) + ' | ' + parts(full));)") ==
        "http://127.0.0.1:8787/a?b=1 127.0.0.1:8787 127.0.0.1 8787 http://127.0.0.1:8787 /a ?b=1");
}

TEST_CASE("header names must be tokens and values are trimmed and refused with NUL CR or LF as before") {
  std::string out = Run(R"(
    const nameError = name => { try { new Headers([[name, 'v']]); return 'ok'; } catch (e) { return e.message; } };
    const valueError = value => { try { return new Headers({ a: value }).get('a'); } catch (e) { return e.message; } };
    const names = ["!#$%&'*+-.^_`|~09azAZ", 'a b', '', 'a:b', '\u0010', '\u00e9', 'a\u0130', '@', '[', '{', '"', '('];
    const values = ['  x y \t', '\t\r\n', ' \r\n ', 'a\u0000b', 'a\rb', 'a\nb', '\u00e9\u0130', ' ', ''];
    return new Response(JSON.stringify([[...request.headers], names.map(nameError), values.map(valueError)]));
  )");
  CHECK(out == R"([[["accept","*/*"],["host","example.com"],["x-mixed-case","padded"]],)"
               R"(["ok","Invalid header name: \"a b\"","Invalid header name: \"\"","Invalid header name: \"a:b\"",)"
               R"("Invalid header name: \"\\u0010\"","Invalid header name: \"é\"","Invalid header name: \"aİ\"",)"
               R"("Invalid header name: \"@\"","Invalid header name: \"[\"","Invalid header name: \"{\"",)"
               R"("Invalid header name: \"\\\"\"","Invalid header name: \"(\""],)"
               R"(["x y","","","Invalid header value.","Invalid header value.","Invalid header value.","éİ","",""]])");
}
