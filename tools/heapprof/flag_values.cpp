// The parsers of the CLI's flag values (durations, sizes, limits, shares):
// each runs once, inside the flag's CLI11 check (ParsedInto), so a bad value
// is a usage error while parsing and nothing parses the text again.
#include "tools/heapprof/flag_values.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>

#include "heapprof/core/raw_snapshot.h"
#include "heapprof/core/units.h"
#include "heapprof/runtime/worker_runtime.h"
#include "heapprof/v8/v8_host.h"

namespace heapprof::cli {
namespace {

bool AllDigits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// A whole number of decimal digits that fits in 64 bits.
Result<uint64_t> ParseCount(const std::string& text) {
  uint64_t value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec == std::errc::result_out_of_range) return Error(ErrorCode::kInvalidArgument, text + " is too large");
  if (ec != std::errc() || end != text.data() + text.size()) {
    return Error(ErrorCode::kInvalidArgument, "\"" + text + "\" is not a whole number");
  }
  return value;
}

Status Bad(std::string message) { return Error(ErrorCode::kInvalidArgument, std::move(message)); }

}  // namespace

Result<int64_t> ParsePositiveDuration(const std::string& text) {
  HEAPPROF_ASSIGN_OR_RETURN(int64_t ns, ParseDuration(text));
  if (ns <= 0) return Bad("must be more than 0");
  return ns;
}

Result<Warmup> ParseWarmup(const std::string& text) {
  Warmup warmup;
  if (AllDigits(text)) {
    HEAPPROF_ASSIGN_OR_RETURN(warmup.requests, ParseCount(text));
    return warmup;
  }
  Result<int64_t> ns = ParseDuration(text);
  if (!ns.ok()) return Bad("takes a number of requests (200) or a duration (2s): " + ns.status().message());
  warmup.ns = ns.value();
  return warmup;
}

Result<uint64_t> ParseInterval(const std::string& text) {
  HEAPPROF_ASSIGN_OR_RETURN(uint64_t bytes, ParseSize(text));
  if (bytes == 0 || bytes > (1ull << 30)) return Bad("must be between 1 byte and 1 GiB");
  return bytes;
}

Result<std::optional<uint64_t>> ParseIntervalOrAuto(const std::string& text) {
  if (text == "auto") return std::optional<uint64_t>();
  Result<uint64_t> bytes = ParseInterval(text);
  if (!bytes.ok()) return Bad(bytes.status().message() + " (or auto)");
  return std::optional<uint64_t>(bytes.value());
}

Result<uint64_t> ParseHeapLimit(const std::string& text) {
  uint64_t bytes = 0;
  if (AllDigits(text)) {
    Result<uint64_t> mib = ParseCount(text);
    if (!mib.ok() || mib.value() > 64 * 1024) return Bad("must be between 8 MiB and 64 GiB");
    bytes = mib.value() * 1024 * 1024;
  } else {
    Result<uint64_t> parsed = ParseSize(text);
    if (!parsed.ok()) return Bad("takes MiB (128) or a size (1GiB): " + parsed.status().message());
    bytes = parsed.value();
  }
  if (bytes < 8u * 1024 * 1024 || bytes > 64ull * 1024 * 1024 * 1024) return Bad("must be between 8 MiB and 64 GiB");
  return bytes;
}

Result<double> ParseFailureShare(const std::string& text) {
  std::string share = text;
  bool percent = !share.empty() && share.back() == '%';
  if (percent) share.pop_back();
  char* end = nullptr;
  double value = share.empty() ? -1 : std::strtod(share.c_str(), &end);
  if (end == nullptr || *end != '\0' || !(value >= 0)) return Bad("takes a share of requests: 50% or 0.5");
  if (percent || value > 1) value /= 100;
  if (value > 1) return Bad("cannot be above 100%");
  return value;
}

Result<std::chrono::milliseconds> ParseTimeout(const std::string& text) {
  HEAPPROF_ASSIGN_OR_RETURN(int64_t ns, ParseDuration(text));
  if (ns < 1'000'000) return Bad("must be at least 1ms");
  return std::chrono::milliseconds(ns / 1'000'000);
}

Result<std::chrono::milliseconds> ParseRequestTimeout(const std::string& text) {
  if (text == "none") return std::chrono::milliseconds(0);
  if (Result<int64_t> ns = ParseDuration(text); ns.ok() && ns.value() == 0) return std::chrono::milliseconds(0);
  Result<std::chrono::milliseconds> timeout = ParseTimeout(text);
  if (!timeout.ok()) return Bad(timeout.status().message() + " (or 0 for none)");
  return timeout;
}

std::string DefaultIntervalText() { return std::to_string(kDefaultIntervalBytes / 1024) + "KiB"; }
std::string DefaultHeapLimitText() { return std::to_string(kDefaultHeapLimitBytes >> 20); }
std::string DefaultRequestTimeoutText() {
  return std::to_string(std::chrono::duration_cast<std::chrono::seconds>(kDefaultRequestTimeout).count()) + "s";
}

}  // namespace heapprof::cli
