// Exact attribution in a V8 that heapprof did not start (`heapprof attach`):
// V8's sampler records only physical frames, so a helper the optimizing
// compiler inlined is charged to its caller. From outside, through the
// DevTools protocol: turn the target's inlining flags off
// (Runtime.evaluate of process.getBuiltinModule('v8').setFlagsFromString,
// Node >= 20.16), deoptimize everything once (a precise-coverage start and
// stop makes V8 throw its optimized code away), let the code warm up again,
// profile; at detach put the flags back and deoptimize again, so the target
// returns to its own optimization. V8-free.
//
// Reading a flag: V8 offers no getter, but v8.cachedDataVersionTag() hashes
// every flag's value. Setting --no-F and seeing the tag change means F was on
// (and heapprof turned it off); no change means it was off already or has no
// effect in this V8 (unknown, read-only, or its tier not in use). Only the
// flags that changed are turned on again, and the tag read afterwards is
// compared with the one read first.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "heapprof/core/status.h"
#include "heapprof/remote/devtools_client.h"

namespace heapprof::remote {

// What SwitchInliningOff found and did.
struct InliningSwitch {
  enum class Outcome {
    kSwitchedOff,   // heapprof turned inlining flags off (changed not empty): deoptimize, warm up
    kAlreadyOff,    // the target's flags were off already: nothing to change
    kCannotSwitch,  // no JS-reachable flag setter: inlining stays as the target runs it
  };
  Outcome outcome = Outcome::kCannotSwitch;
  std::string runtime;                 // "node.js v20.19.0", "workerd"... as far as known
  std::string v8_version;              // process.versions.v8 where the target has it
  std::vector<std::string> changed;    // flag names (no dashes) heapprof turned off: to turn on at detach
  std::vector<std::string> no_effect;  // turning these off changed nothing (off already, or not in this V8)
  // Flags a previous `heapprof attach` turned off and never restored (it
  // died): adopted, restored at this detach.
  std::vector<std::string> adopted;
  std::optional<uint64_t> tag_before;  // v8.cachedDataVersionTag() before any change (the target's own)
  std::string why;                     // kCannotSwitch: the reason, one sentence
  std::string how;                     // kCannotSwitch: how to start the target for exact attribution

  // The flags to turn on again at detach (changed and adopted).
  std::vector<std::string> ToRestore() const;
};

// Which runtime an inspector's /json/version "Browser" names.
enum class RuntimeKind { kNode, kWorkerd, kChrome, kOther };
RuntimeKind RuntimeFromBrowser(const std::string& browser);

// How to start a target of this kind with `flags` (e.g. "--no-turbo-inlining")
// for exact attribution: node's command line, workerd's v8Flags, Chrome's --js-flags.
std::string HowToStartExact(RuntimeKind kind, const std::vector<std::string>& flags);

// Turns off each of `flags` (V8 names with their "--no-" form, e.g.
// "--no-turbo-inlining") in the target, reading first which were on. A
// target that cannot be switched (workerd, a Node without getBuiltinModule,
// Runtime.evaluate refused or throwing) is kCannotSwitch, not an error; a
// broken connection is.
Result<InliningSwitch> SwitchInliningOff(DevToolsSession& session, const std::string& browser,
                                         const std::vector<std::string>& flags, Millis timeout);

// What DeoptimizeAll did: every function's optimized code is gone, or nothing
// was done because the target's precise coverage is already running (another
// tool's, or Node's own under NODE_V8_COVERAGE: stopping it would end that
// tool's recording).
enum class Deoptimization { kDone, kCoverageRunning };

// Why kCoverageRunning deoptimized nothing, as a sentence for the user.
inline constexpr const char* kCoverageRunningText =
    "the target's precise coverage is already running (another tool's, or Node's own under NODE_V8_COVERAGE); "
    "heapprof would end it to deoptimize";

// Makes V8 throw away every function's optimized code: Profiler.startPreciseCoverage
// (callCount) then stopPreciseCoverage. A failed call or a lost connection is
// an error; another tool's coverage is kCoverageRunning.
Result<Deoptimization> DeoptimizeAll(DevToolsSession& session, Millis timeout);

// What RestoreInlining did.
struct InliningRestore {
  std::vector<std::string> restored;  // flag names turned on again
  std::optional<uint64_t> tag_after;  // v8.cachedDataVersionTag() after
  bool tag_matches = false;           // tag_after == the tag read before the first change
  bool deoptimized = false;
  std::string Describe(const InliningSwitch& from) const;  // one line for the profile and the report
};

// Turns the flags SwitchInliningOff changed on again and deoptimizes once
// more, so the target re-optimizes with its own flags.
Result<InliningRestore> RestoreInlining(DevToolsSession& session, const InliningSwitch& from, Millis timeout);

}  // namespace heapprof::remote
