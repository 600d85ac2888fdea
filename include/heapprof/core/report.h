// Per-function aggregation of a profile, and the `top` table printed by the CLI.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "heapprof/core/estimate.h"
#include "heapprof/core/profile.h"
#include "heapprof/core/status.h"

namespace heapprof {

struct FunctionTotal {
  std::string name;
  std::string filename;
  int64_t start_line = 0;
  int64_t flat = 0;  // value of samples whose leaf is this function
  int64_t cum = 0;   // value of samples whose stack contains it (counted once per sample)
  // How V8 sampled flat and cum (all zero when the profile cannot say).
  SampledValue flat_sampling;
  SampledValue cum_sampling;
};

// Which frames a table shows.
enum class FrameView {
  kAll,       // every frame, as V8 recorded it (pprof's view)
  kUserCode,  // "your code": V8 built-ins, VM states and heapprof's runtime frames
              // charged to their nearest user-code caller (pprof's -hide of them)
};

// Whether a frame of this file is the user's code: a script of the worker or
// of the packages it bundles. V8 built-ins and VM states (no file),
// heapprof's runtime scripts ("heapprof:...") and Node's internals
// ("node:...", "internal/...") are not.
bool IsUserCodeFile(std::string_view filename);

// Totals per function for one sample type, sorted by flat (or cum) descending.
// In the kUserCode view the frames of a stack below its innermost user-code
// frame are dropped, so that frame is the leaf; a stack without user code is
// charged to its innermost frame with a file (the runtime), else left as is.
std::vector<FunctionTotal> FunctionTotals(const Profile& profile, int sample_index, bool sort_by_cum = false,
                                          FrameView view = FrameView::kAll);

// Resolves a sample type by name ("inuse_space") or index; empty name means
// the profile's default sample type (or the last one).
Result<int> ResolveSampleIndex(const Profile& profile, const std::string& name);

// Human-readable bytes ("12.3 MiB") or counts ("1.2k") for a sample type's unit.
std::string FormatValue(int64_t value, std::string_view unit);

struct TopOptions {
  int sample_index = kInuseSpace;
  size_t rows = 10;
  bool sort_by_cum = false;
  FrameView view = FrameView::kAll;
};
// A `pprof -top`-like table, readable without pprof. When the profile says how
// it was sampled, every share carries its 95 % sampling error ("86.7% ±5.9")
// and a sample type with too few samples to rank functions says so.
std::string FormatTopTable(const Profile& profile, const TopOptions& options);

// Whether a sample type has samples enough to rank its top functions: the
// widest 95 % error of the top `rows` flat and cum shares, in points, against
// the 10 points above which the tables say "too few to rank functions".
struct SamplingCheck {
  bool sampled = false;  // the profile says how it was sampled
  bool enough = true;    // every share within 10 points (or not sampled)
  double samples = 0;    // raw samples of the sample type
  double widest_points = 0;
  int64_t suggested_interval = 0;  // the interval that would give ~400 samples (power of two, >= 1 KiB)
};
SamplingCheck CheckSampling(const Profile& profile, int sample_index, size_t rows = 10);
// "inuse_space: 15 samples; shares are ±25 points, too few to rank functions"
// for a sample type without enough samples, else "".
std::string TooFewSamples(const Profile& profile, int sample_index, size_t rows = 10);
// "64KiB": a sampling interval as a user types it.
std::string FormatInterval(int64_t bytes);

// Why a sample type's shares carry no sampling error: "" when they do, else
// one line such as "the profile does not say how often it sampled (no
// period)".
std::string WhyNoSamplingError(const Profile& profile, int sample_index);

struct SummaryOptions {
  // Requests the window served, for the runtime's bytes per request; 0: unknown.
  int64_t requests = 0;
  // Who the frames outside user code are: heapprof's own runtime, or the
  // profiled process's (workerd, Node.js) under attach and run --runtime workerd.
  std::string runtime = "heapprof's runtime";
};
// The one-line answer for a sample type, in the user-code view: the user
// function that owns the most, its share and the share's 95 % error
// ("handler (worker.js:12) holds 68.7% ±5.1 of 3.2 MiB (inuse_space)..."),
// or, when heapprof's runtime itself is the top consumer, that it is and how
// much it comes to per request. "" when the sample type is empty.
std::string FormatSummaryLine(const Profile& profile, int sample_index, const SummaryOptions& options = {});

}  // namespace heapprof
