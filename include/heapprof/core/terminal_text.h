// Names from a profile, made safe to print on a terminal: a profile may come
// from anyone, and a function named "\x1b]0;...\x07" must not retitle or
// rewrite the reader's terminal.
#pragma once

#include <string>
#include <string_view>

namespace heapprof {

// `text` with control characters (C0, DEL and UTF-8-encoded C1, which holds
// the 8-bit CSI) written as \xNN or \u00NN escapes; everything else as is.
std::string TerminalSafe(std::string_view text);

}  // namespace heapprof
