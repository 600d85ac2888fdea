// How the debug endpoints show a user's input in a message.
#pragma once

#include <string>
#include <string_view>

#include <fmt/format.h>

namespace heapprof::internal {

// Input shown in a message: printable ASCII as is, anything else as \xNN,
// at most 64 characters of it.
inline std::string Shown(std::string_view text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (i == 64) {
      out += "...";
      break;
    }
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += static_cast<char>(c);
    } else {
      out += fmt::format("\\x{:02x}", c);
    }
  }
  return out;
}

}  // namespace heapprof::internal
