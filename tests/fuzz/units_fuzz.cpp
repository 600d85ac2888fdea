// libFuzzer target: ParseSize and ParseDuration on arbitrary text never
// crash, and every value they accept reads back the same from its plain
// number and, within the display rounding, from how `heapprof top` prints it.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "heapprof/core/report.h"
#include "heapprof/core/units.h"

namespace {

void Check(bool ok) {
  if (!ok) std::abort();
}

// Integers up to 2^53 are exact in the parsers' double arithmetic.
constexpr uint64_t kExact = uint64_t{1} << 53;

// FormatValue keeps 2-3 significant digits: at most 5 % (plus the parser's
// rounding to a whole byte or nanosecond) away from the value.
bool Close(uint64_t a, uint64_t b) {
  uint64_t diff = a > b ? a - b : b - a;
  return diff <= a / 20 + 1;
}

template <typename T>
bool Is(const heapprof::Result<T>& r, T expected) {
  return r.ok() && r.value() == expected;
}

void CheckSize(std::string_view text) {
  heapprof::Result<uint64_t> size = heapprof::ParseSize(text);
  heapprof::Result<uint64_t> padded = heapprof::ParseSize(" " + std::string(text) + "\t");
  Check(size.ok() == padded.ok() && (!size.ok() || *size == *padded));
  if (!size.ok()) {
    Check(!size.status().message().empty());
    return;
  }
  const uint64_t n = *size;
  if (n <= kExact) {
    Check(Is(heapprof::ParseSize(std::to_string(n)), n));
    Check(Is(heapprof::ParseSize(std::to_string(n) + "B"), n));
    if (n % 1024 == 0) Check(Is(heapprof::ParseSize(std::to_string(n / 1024) + "KiB"), n));
  }
  // What heapprof top prints for it (B up to EiB) parses back, within rounding.
  if (n <= static_cast<uint64_t>(INT64_MAX)) {
    std::string shown = heapprof::FormatValue(static_cast<int64_t>(n), "bytes");
    heapprof::Result<uint64_t> back = heapprof::ParseSize(shown);
    Check(back.ok() && Close(n, *back));
  }
}

void CheckDuration(std::string_view text) {
  heapprof::Result<int64_t> duration = heapprof::ParseDuration(text);
  heapprof::Result<int64_t> padded = heapprof::ParseDuration("\n" + std::string(text) + " ");
  Check(duration.ok() == padded.ok() && (!duration.ok() || *duration == *padded));
  if (!duration.ok()) {
    Check(!duration.status().message().empty());
    return;
  }
  Check(*duration >= 0);
  const auto ns = static_cast<uint64_t>(*duration);
  if (ns <= kExact) Check(Is(heapprof::ParseDuration(std::to_string(ns) + "ns"), *duration));
  std::string shown = heapprof::FormatValue(*duration, "nanoseconds");
  heapprof::Result<int64_t> back = heapprof::ParseDuration(shown);
  Check(back.ok() && Close(ns, static_cast<uint64_t>(*back)));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  CheckSize(text);
  CheckDuration(text);
  return 0;
}
