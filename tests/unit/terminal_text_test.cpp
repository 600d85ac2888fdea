// Names from a profile printed on a terminal: control characters escaped.
#include <catch2/catch.hpp>

#include "heapprof/core/terminal_text.h"

using heapprof::TerminalSafe;

TEST_CASE("TerminalSafe escapes C0, DEL and C1 controls and keeps everything else") {
  CHECK(TerminalSafe("handleRequest") == "handleRequest");
  CHECK(TerminalSafe("\x1b]0;pwned\x07") == "\\x1b]0;pwned\\x07");
  CHECK(TerminalSafe("a\rb\nc\td\x7f") == "a\\x0db\\x0ac\\x09d\\x7f");
  CHECK(TerminalSafe("csi\xc2\x9b"
                     "2J") == "csi\\u009b2J");  // U+009B, the 8-bit CSI
  CHECK(TerminalSafe("caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x94\xa5") == "caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x94\xa5");
  CHECK(TerminalSafe("\xc2\xa0nbsp") == "\xc2\xa0nbsp");
  CHECK(TerminalSafe(std::string_view("nul\0x", 5)) == "nul\\x00x");
  CHECK(TerminalSafe("") == "");
}
