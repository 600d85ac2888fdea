// The parsers of the CLI's flag values, shared by run, serve and attach.
// Each is used once, by the flag's CLI11 check: ParsedInto(&field, Parse...)
// parses the text, stores the value and turns an error into a usage error
// ("--flag: why", exit 2). The messages follow the flag's name.
#pragma once

#include <CLI/CLI.hpp>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "heapprof/core/status.h"

namespace heapprof::cli {

// --warmup: a number of requests or a time.
struct Warmup {
  uint64_t requests = 0;
  int64_t ns = 0;
};

Result<int64_t> ParsePositiveDuration(const std::string& text);                // 5s, 250ms; more than 0
Result<Warmup> ParseWarmup(const std::string& text);                           // 200 (requests) or 2s
Result<uint64_t> ParseInterval(const std::string& text);                       // a size, 1 byte .. 1 GiB
Result<std::optional<uint64_t>> ParseIntervalOrAuto(const std::string& text);  // the same, or auto (empty)
Result<uint64_t> ParseHeapLimit(const std::string& text);                 // MiB (128) or a size (1GiB), 8 MiB .. 64 GiB
Result<double> ParseFailureShare(const std::string& text);                // 50% or 0.5
Result<std::chrono::milliseconds> ParseTimeout(const std::string& text);  // at least 1ms
Result<std::chrono::milliseconds> ParseRequestTimeout(const std::string& text);  // the same, or 0 / none (0)

// The libraries' defaults as --help shows them: "512KiB" (kDefaultIntervalBytes),
// "128" MiB (kDefaultHeapLimitBytes), "30s" (kDefaultRequestTimeout).
std::string DefaultIntervalText();
std::string DefaultHeapLimitText();
std::string DefaultRequestTimeoutText();

// A CLI11 check that parses its flag's value once, with `parse` (text ->
// Result<T>), and stores the value in *out.
template <typename T, typename Parse>
CLI::Validator ParsedInto(T* out, Parse parse) {
  return CLI::Validator(
      [out, parse](std::string& text) -> std::string {
        auto parsed = parse(text);
        if (!parsed.ok()) return parsed.status().message();
        *out = std::move(parsed).value();
        return std::string();
      },
      "");
}

}  // namespace heapprof::cli
