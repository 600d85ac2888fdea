#include "heapprof/core/text.h"

#include <fmt/format.h>

#include <cstdint>

namespace heapprof::internal {

std::string_view BaseName(std::string_view path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

std::string_view FileLabel(std::string_view filename) {
  return filename.starts_with("heapprof:") ? filename : BaseName(filename);
}

std::string_view UrlScheme(std::string_view name) {
  size_t colon = name.find(':');
  if (colon == std::string_view::npos || colon == 0 || colon > name.find('/')) return {};
  const auto alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); };
  if (!alpha(name[0])) return {};
  for (size_t i = 1; i < colon; ++i) {
    char c = name[i];
    if (!alpha(c) && !(c >= '0' && c <= '9') && c != '+' && c != '-' && c != '.') return {};
  }
  return name.substr(0, colon);
}

std::string LocalPathOf(std::string_view location) {
  if (location.starts_with("file://")) return std::string(location.substr(7));
  if (!UrlScheme(location).empty()) return {};
  return std::string(location);
}

size_t Utf8SequenceLength(std::string_view text, size_t i) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[k]); };
  unsigned char c = byte(i);
  if (c < 0x80) return 1;
  size_t n;
  uint32_t cp;
  if ((c & 0xe0) == 0xc0) {
    n = 2;
    cp = c & 0x1f;
  } else if ((c & 0xf0) == 0xe0) {
    n = 3;
    cp = c & 0x0f;
  } else if ((c & 0xf8) == 0xf0) {
    n = 4;
    cp = c & 0x07;
  } else {
    return 0;  // a continuation byte, or 0xf8..0xff
  }
  if (text.size() - i < n) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((byte(i + k) & 0xc0) != 0x80) return 0;
    cp = (cp << 6) | (byte(i + k) & 0x3f);
  }
  static constexpr uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[n] || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return 0;
  return n;
}

bool IsValidUtf8(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    size_t n = Utf8SequenceLength(text, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string SanitizeUtf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    size_t n = Utf8SequenceLength(text, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";  // U+FFFD
      ++i;
      continue;
    }
    unsigned char c = static_cast<unsigned char>(text[i]);
    if (n > 1 || c >= 0x20 || c == '\n' || c == '\t') out.append(text.substr(i, n));
    i += n;
  }
  return out;
}

std::string EscapeMarkup(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string Base64Encode(std::string_view bytes) {
  static constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  for (size_t i = 0; i < bytes.size(); i += 3) {
    uint32_t n = static_cast<uint32_t>(static_cast<unsigned char>(bytes[i])) << 16;
    if (i + 1 < bytes.size()) n |= static_cast<uint32_t>(static_cast<unsigned char>(bytes[i + 1])) << 8;
    if (i + 2 < bytes.size()) n |= static_cast<unsigned char>(bytes[i + 2]);
    out += kAlphabet[(n >> 18) & 63];
    out += kAlphabet[(n >> 12) & 63];
    out += i + 1 < bytes.size() ? kAlphabet[(n >> 6) & 63] : '=';
    out += i + 2 < bytes.size() ? kAlphabet[n & 63] : '=';
  }
  return out;
}

Result<std::string> Base64Decode(std::string_view text, Base64Mode mode) {
  const bool lenient = mode == Base64Mode::kLenient;
  std::string out;
  out.reserve(text.size() / 4 * 3);
  uint32_t acc = 0;
  int bits = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    int v;
    if (c >= 'A' && c <= 'Z')
      v = c - 'A';
    else if (c >= 'a' && c <= 'z')
      v = c - 'a' + 26;
    else if (c >= '0' && c <= '9')
      v = c - '0' + 52;
    else if (c == '+' || (lenient && c == '-'))
      v = 62;
    else if (c == '/' || (lenient && c == '_'))
      v = 63;
    else if (lenient && c == '=')
      break;
    else if (lenient && (c == ' ' || c == '\t' || c == '\r' || c == '\n'))
      continue;
    else
      return Error(ErrorCode::kDataLoss, fmt::format("invalid base64 character at offset {}", i));
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xff));
    }
  }
  return out;
}

std::string FileSafeName(std::string name) {
  for (char& c : name) {
    auto u = static_cast<unsigned char>(c);
    if (c == '/' || c == '\\' || c == '#' || c == ' ' || u < 0x20 || u == 0x7f) c = '-';
  }
  return name;
}

std::string AnonymousFunctionName(std::string_view script, int line, int column) {
  return fmt::format("(anonymous {}:{}:{})", FileLabel(script), line, column);
}

bool IsAnonymousFunctionName(std::string_view name) { return name.empty() || name.starts_with("(anonymous"); }

}  // namespace heapprof::internal
