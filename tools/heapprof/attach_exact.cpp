// `heapprof attach`'s switch to exact attribution (attach_exact.h).
#include "tools/heapprof/attach_exact.h"

#include <fmt/format.h>

#include <chrono>
#include <string>
#include <vector>

#include "heapprof/v8/attribution.h"
#include "tools/heapprof/commands.h"
#include "tools/heapprof/interrupt.h"

namespace heapprof::cli {
namespace {

using remote::InliningSwitch;

// How long the target runs after the deoptimization before the first window
// opens: hot code is optimized again (without inlining) by then, so the
// profile sees the target's steady code, not its interpreter. Measured with
// %GetOptimizationStatus under load (docs/remote.md, "Exact attribution by default").
constexpr int64_t kDefaultWarmupNs = 3'000'000'000;

std::string FlagList(const std::vector<std::string>& names, std::string_view prefix) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : " ") + std::string(prefix) + n;
  return out.empty() ? "none" : out;
}

}  // namespace

int SwitchToExactAttribution(const ExactAttachFlags& flags, const std::string& runtime,
                             remote::RemoteWindowOptions& options, ExactAttach& exact) {
  if (flags.allow_inlining) {
    options.inlining_allowed = 1;
    options.notes.push_back("exact_attribution: no (--allow-inlining: the target's flags and code as they were)");
  } else {
    Result<InliningSwitch> switched =
        remote::SwitchInliningOff(exact.session, runtime, NoInliningFlags(), exact.timeout);
    if (!switched.ok()) return Fail("attach", switched.status());
    exact.switched = switched.value();
    const InliningSwitch& sw = exact.switched;
    if (!sw.v8_version.empty()) options.notes.push_back("v8: " + sw.v8_version);
    if (runtime.empty()) options.runtime = sw.runtime;
    switch (sw.outcome) {
      case InliningSwitch::Outcome::kCannotSwitch: {
        options.inlining_allowed = -1;
        const std::string line = fmt::format(
            "inlining cannot be turned off in this target ({}): a function's "
            "allocations may be charged to its caller; for exact attribution {}",
            sw.why, sw.how);
        fmt::print(stderr, "heapprof attach: warning: {}\n", line);
        options.notes.push_back("exact_attribution: not possible: " + line);
        break;
      }
      case InliningSwitch::Outcome::kAlreadyOff:
        options.inlining_allowed = 0;
        options.notes.push_back(fmt::format(
            "exact_attribution: yes, the target's inlining flags were off already ({} changed nothing); nothing "
            "changed{}",
            FlagList(sw.no_effect, "--no-"),
            sw.adopted.empty() ? std::string()
                               : fmt::format(" (a previous heapprof attach had set {} and not restored them: "
                                             "restored at detach)",
                                             FlagList(sw.adopted, "--no-"))));
        break;
      case InliningSwitch::Outcome::kSwitchedOff: {
        Result<remote::Deoptimization> d = remote::DeoptimizeAll(exact.session, exact.timeout);
        if (!d.ok()) return Fail("attach", d.status());
        if (*d == remote::Deoptimization::kCoverageRunning) {
          // Another tool's coverage: its optimized code stays; put the flags back and say so.
          Status restored = exact.Restore();
          if (!restored.ok()) return Fail("attach", restored);
          options.inlining_allowed = -1;
          const std::string line = fmt::format(
              "{}; inlining left as the target runs it: a function's allocations "
              "may be charged to its caller",
              remote::kCoverageRunningText);
          fmt::print(stderr, "heapprof attach: warning: {}\n", line);
          options.notes.push_back("exact_attribution: not possible: " + line);
          break;
        }
        exact.deoptimized = true;
        options.inlining_allowed = 0;
        const int64_t warmup_ns = flags.warmup ? std::chrono::nanoseconds(*flags.warmup).count() : kDefaultWarmupNs;
        fmt::print(stderr,
                   "heapprof attach: inlining off: set {} in the target and deoptimized it; {:g} s of "
                   "warm-up before the window (restored at detach)\n",
                   FlagList(sw.changed, "--no-"), static_cast<double>(warmup_ns) / 1e9);
        const auto warm_start = std::chrono::steady_clock::now();
        if (warmup_ns > 0) {
          Status waited =
              exact.session.Wait(std::chrono::nanoseconds(warmup_ns), [] { return InterruptWatcher::received() != 0; });
          if (!waited.ok()) return Fail("attach", waited.message() + "\n(no profile written)");
        }
        const double warmed = std::chrono::duration<double>(std::chrono::steady_clock::now() - warm_start).count();
        options.notes.push_back(fmt::format(
            "exact_attribution: yes: heapprof set {} (Runtime.evaluate, v8.setFlagsFromString), deoptimized "
            "every function (Profiler.startPreciseCoverage/stopPreciseCoverage) and let the code warm up {:.2f} s "
            "before the first window{}",
            FlagList(sw.changed, "--no-"), warmed,
            sw.no_effect.empty() ? std::string()
                                 : fmt::format("; {} changed nothing (off already, or not used by this V8)",
                                               FlagList(sw.no_effect, "--no-"))));
        if (int signal = InterruptWatcher::received(); signal != 0) {
          Status restored = exact.Restore();
          Fail("attach", fmt::format("interrupted by {} during the warm-up; {}; no profile written", SignalName(signal),
                                     restored.ok() ? exact.restore_line : restored.message()));
          return InterruptedExitCode(signal);
        }
        break;
      }
    }
  }
  return kExitOk;
}

}  // namespace heapprof::cli
