// The core's shared text utilities (heapprof/core/text.h).
#include <catch2/catch.hpp>

#include <string>

#include "heapprof/core/text.h"

using namespace heapprof;
using namespace heapprof::internal;

TEST_CASE("text: BaseName is the last slash-separated component", "[text]") {
  CHECK(BaseName("a/b/c.js") == "c.js");
  CHECK(BaseName("/abs/x.js") == "x.js");
  CHECK(BaseName("https://example.com/app/worker.js") == "worker.js");
  CHECK(BaseName("c.js") == "c.js");
  CHECK(BaseName("a/") == "");
  CHECK(BaseName("") == "");
}

TEST_CASE("text: FileLabel shows a base name, and heapprof's runtime scripts whole", "[text]") {
  CHECK(FileLabel("/w/dist/app/worker.js") == "worker.js");
  CHECK(FileLabel("heapprof:runtime") == "heapprof:runtime");
  // The package a runtime library frame belongs to stays in sight.
  CHECK(FileLabel("heapprof:runtime-libraries/urlpattern-polyfill/dist/urlpattern.js") ==
        "heapprof:runtime-libraries/urlpattern-polyfill/dist/urlpattern.js");
  CHECK(FileLabel("node:internal/fs/utils") == "utils");
}

TEST_CASE("text: UTF-8 is strict, as protobuf requires", "[text]") {
  CHECK(IsValidUtf8(""));
  CHECK(IsValidUtf8("plain ascii"));
  CHECK(IsValidUtf8("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80"));  // é € 😀
  CHECK(IsValidUtf8("\xF4\x8F\xBF\xBF"));                           // U+10FFFF
  CHECK_FALSE(IsValidUtf8("\x80"));                                 // a stray continuation byte
  CHECK_FALSE(IsValidUtf8("\xC3"));                                 // cut off
  CHECK_FALSE(IsValidUtf8("\xE2\x82"));                             // cut off
  CHECK_FALSE(IsValidUtf8("\xC0\xAF"));                             // overlong '/'
  CHECK_FALSE(IsValidUtf8("\xE0\x80\xAF"));                         // overlong, three bytes
  CHECK_FALSE(IsValidUtf8("\xF0\x80\x80\xAF"));                     // overlong, four bytes
  CHECK_FALSE(IsValidUtf8("\xED\xA0\x80"));                         // a surrogate (U+D800)
  CHECK_FALSE(IsValidUtf8("\xF4\x90\x80\x80"));                     // above U+10FFFF
  CHECK_FALSE(IsValidUtf8("\xFF"));
  CHECK(Utf8SequenceLength("\xE2\x82\xAC!", 0) == 3);
  CHECK(Utf8SequenceLength("\xE2\x82\xAC!", 3) == 1);
  CHECK(Utf8SequenceLength("\xE2\x82\xAC!", 1) == 0);
}

TEST_CASE("text: SanitizeUtf8 replaces what is not UTF-8 and drops control characters", "[text]") {
  CHECK(SanitizeUtf8("ok caf\xC3\xA9") == "ok caf\xC3\xA9");
  CHECK(SanitizeUtf8("a\xFF"
                     "b") ==
        "a\xEF\xBF\xBD"
        "b");
  // A surrogate or an overlong form is three replaced bytes, as the strict check sees it.
  CHECK(SanitizeUtf8("\xED\xA0\x80") == "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
  CHECK(SanitizeUtf8("tab\tnew\nbell\x07nul") == std::string("tab\tnew\nbellnul"));
  CHECK(IsValidUtf8(SanitizeUtf8("\xC0\xAF\xE0\x80\xAF\xF4\x90\x80\x80 x")));
}

TEST_CASE("text: EscapeMarkup escapes the five markup characters", "[text]") {
  CHECK(EscapeMarkup("a<b> & \"c\" 'd'") == "a&lt;b&gt; &amp; &quot;c&quot; &#39;d&#39;");
  CHECK(EscapeMarkup("plain") == "plain");
  CHECK(EscapeMarkup("&amp;") == "&amp;amp;");
}

TEST_CASE("text: base64 encodes RFC 4648's vectors and decodes them back", "[text]") {
  const std::pair<std::string, std::string> vectors[] = {
      {"", ""},
      {"f", "Zg=="},
      {"fo", "Zm8="},
      {"foo", "Zm9v"},
      {"foob", "Zm9vYg=="},
      {"fooba", "Zm9vYmE="},
      {"foobar", "Zm9vYmFy"},
  };
  for (const auto& [plain, encoded] : vectors) {
    CHECK(Base64Encode(plain) == encoded);
    Result<std::string> decoded = Base64Decode(encoded);
    REQUIRE(decoded.ok());
    CHECK(decoded.value() == plain);
  }
  std::string bytes;
  for (int i = 0; i < 256; ++i) bytes += static_cast<char>(i);
  CHECK(Base64Decode(Base64Encode(bytes)).value() == bytes);
  // base64url and whitespace (line-wrapped data URLs) decode too.
  CHECK(Base64Decode("-_8=").value() == "\xFB\xFF");
  CHECK(Base64Decode("Zm9v\nYmFy").value() == "foobar");
  Result<std::string> bad = Base64Decode("Zm9v*");
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.status().code() == ErrorCode::kDataLoss);
  CHECK(bad.status().message() == "invalid base64 character at offset 4");
}

TEST_CASE("text: anonymous function names are made and recognised in one place", "[text]") {
  CHECK(AnonymousFunctionName("dist/app/worker.js", 3, 14) == "(anonymous worker.js:3:14)");
  CHECK(AnonymousFunctionName("heapprof:runtime-libraries/web-streams-polyfill/dist/ponyfill.mjs", 1, 9) ==
        "(anonymous heapprof:runtime-libraries/web-streams-polyfill/dist/ponyfill.mjs:1:9)");
  CHECK(IsAnonymousFunctionName(AnonymousFunctionName("x.js", 1, 1)));
  CHECK(IsAnonymousFunctionName(""));
  CHECK(IsAnonymousFunctionName("(anonymous)"));
  CHECK_FALSE(IsAnonymousFunctionName("handler"));
  CHECK_FALSE(IsAnonymousFunctionName("anonymousHelper"));
}

TEST_CASE("text: a URL's scheme is RFC 3986's, before any slash", "[text]") {
  CHECK(UrlScheme("https://example.com/a.js") == "https");
  CHECK(UrlScheme("node:internal/fs") == "node");
  CHECK(UrlScheme("webpack:///src/a.ts") == "webpack");
  CHECK(UrlScheme("data:application/json;base64,e30=") == "data");
  CHECK(UrlScheme("git+ssh://host/repo") == "git+ssh");
  CHECK(UrlScheme("dist/a.js") == "");
  CHECK(UrlScheme("/srv/a:b.js") == "");  // the colon comes after a slash
  CHECK(UrlScheme("src/x://y") == "");    // "://" in a path is no scheme
  CHECK(UrlScheme(":nope") == "");
  CHECK(UrlScheme("1abc:x") == "");  // a scheme starts with a letter
  CHECK(UrlScheme("a b:c") == "");
  CHECK(LocalPathOf("file:///srv/app/w.js") == "/srv/app/w.js");
  CHECK(LocalPathOf("dist/w.js") == "dist/w.js");
  CHECK(LocalPathOf("https://example.com/w.js") == "");
  CHECK(LocalPathOf("node:fs") == "");
}

TEST_CASE("text: FileSafeName makes one file-name component", "[text]") {
  CHECK(FileSafeName("worker-0") == "worker-0");
  CHECK(FileSafeName("my app#1") == "my-app-1");
  CHECK(FileSafeName("a/b\\c") == "a-b-c");
  CHECK(FileSafeName("tab\tnl\ndel\x7f") == "tab-nl-del-");
  CHECK(FileSafeName("caf\xc3\xa9") == "caf\xc3\xa9");  // UTF-8 stays
}
