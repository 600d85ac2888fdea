// Sizes and durations typed by users on the command line.
#include "heapprof/core/units.h"

#include <cctype>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

namespace heapprof {
namespace {

std::string Quoted(std::string_view text) { return "\"" + std::string(text) + "\""; }

bool IEquals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

// A non-negative decimal number at the start of `text` ("12", "1.5", ".5").
// Returns the count of characters consumed, 0 when there is no number.
size_t ScanNumber(std::string_view text, double* value) {
  size_t i = 0;
  double whole = 0;
  bool digits = false;
  while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) {
    whole = whole * 10 + (text[i] - '0');
    digits = true;
    ++i;
  }
  if (i < text.size() && text[i] == '.') {
    size_t j = i + 1;
    double scale = 0.1;
    bool fraction = false;
    while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) {
      whole += (text[j] - '0') * scale;
      scale /= 10;
      fraction = true;
      ++j;
    }
    if (fraction) {
      digits = true;
      i = j;
    }
  }
  if (!digits) return 0;
  *value = whole;
  return i;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

}  // namespace

Result<uint64_t> ParseSize(std::string_view input) {
  std::string_view text = Trim(input);
  if (text.empty()) return Error(ErrorCode::kInvalidArgument, "empty size");
  if (text.front() == '-') return Error(ErrorCode::kInvalidArgument, "size must not be negative: " + Quoted(input));
  double number = 0;
  size_t used = ScanNumber(text, &number);
  if (used == 0) {
    return Error(ErrorCode::kInvalidArgument,
                 "not a size: " + Quoted(input) + " (expected e.g. 512KiB, 64k, 1MiB or a number of bytes)");
  }
  std::string_view suffix = Trim(text.substr(used));
  // B, then K/KB/KiB up to E/EB/EiB: all binary, as heapprof prints them.
  static constexpr char kPrefixes[] = "kmgtpe";
  double multiplier = 0;
  if (suffix.empty() || IEquals(suffix, "b")) {
    multiplier = 1;
  } else {
    double scale = 1;
    for (char prefix : std::string_view(kPrefixes)) {
      scale *= 1024;
      const std::string p(1, prefix);
      if (IEquals(suffix, p) || IEquals(suffix, p + "b") || IEquals(suffix, p + "ib")) multiplier = scale;
    }
  }
  if (multiplier == 0) {
    return Error(ErrorCode::kInvalidArgument,
                 "unknown size unit in " + Quoted(input) + " (use B, KiB, MiB, GiB, TiB, PiB or EiB)");
  }
  double bytes = std::round(number * multiplier);
  // 2^64 is exactly representable; anything at or above it does not fit.
  if (!(bytes < 18446744073709551616.0)) {
    return Error(ErrorCode::kInvalidArgument, "size too large: " + Quoted(input));
  }
  return static_cast<uint64_t>(bytes);
}

Result<int64_t> ParseDuration(std::string_view input) {
  std::string_view text = Trim(input);
  if (text.empty()) return Error(ErrorCode::kInvalidArgument, "empty duration");
  if (text.front() == '-') {
    return Error(ErrorCode::kInvalidArgument, "duration must not be negative: " + Quoted(input));
  }
  auto bad = [&] {
    return Error(ErrorCode::kInvalidArgument,
                 "not a duration: " + Quoted(input) + " (expected e.g. 10s, 250ms, 1m30s or a number of seconds)");
  };
  double total = 0;
  bool first = true;
  while (!text.empty()) {
    double number = 0;
    size_t used = ScanNumber(text, &number);
    if (used == 0) return bad();
    text.remove_prefix(used);
    size_t unit_len = 0;
    while (unit_len < text.size() && std::isalpha(static_cast<unsigned char>(text[unit_len]))) ++unit_len;
    // "µs" starts with a two-byte UTF-8 sequence.
    if (text.substr(0, 3) == "\xC2\xB5s") unit_len = 3;
    std::string_view unit = text.substr(0, unit_len);
    text.remove_prefix(unit_len);
    double scale = 0;
    if (unit.empty()) {
      if (!first || !text.empty()) return bad();
      scale = 1e9;
    } else if (unit == "ns") {
      scale = 1;
    } else if (unit == "us" || unit == "\xC2\xB5s") {
      scale = 1e3;
    } else if (unit == "ms") {
      scale = 1e6;
    } else if (unit == "s") {
      scale = 1e9;
    } else if (unit == "m") {
      scale = 60e9;
    } else if (unit == "h") {
      scale = 3600e9;
    } else {
      return Error(ErrorCode::kInvalidArgument, "unknown duration unit \"" + std::string(unit) + "\" in " +
                                                    Quoted(input) + " (use ns, us, ms, s, m or h)");
    }
    total += number * scale;
    first = false;
  }
  double rounded = std::round(total);
  if (!(rounded < 9223372036854775808.0)) {
    return Error(ErrorCode::kInvalidArgument, "duration too long: " + Quoted(input));
  }
  return static_cast<int64_t>(rounded);
}

}  // namespace heapprof
