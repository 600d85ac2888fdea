// `heapprof attach`'s exact attribution: the target's inlining flags off, one
// deoptimization and a warm-up before the first window, undone once at detach.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "heapprof/remote/devtools_client.h"
#include "heapprof/remote/exact_attribution.h"
#include "heapprof/remote/remote_profiler.h"

namespace heapprof::cli {

// What attach changed in the target, undone once (Restore) on every path
// where the connection still works: the end of the windows, a failed
// window, Ctrl-C. A heapprof killed before that leaves a marker in the
// target that the next attach reads (exact_attribution.h).
struct ExactAttach {
  ExactAttach(remote::DevToolsSession& s, remote::Millis t) : session(s), timeout(t) {}
  ~ExactAttach() { (void)Restore(); }
  Status Restore() {
    if (done) return Status::Ok();
    done = true;
    if (switched.ToRestore().empty()) return Status::Ok();
    Result<remote::InliningRestore> r = remote::RestoreInlining(session, switched, timeout);
    if (!r.ok()) return r.status();
    restore_line = r->Describe(switched);
    return Status::Ok();
  }
  remote::DevToolsSession& session;
  remote::Millis timeout;
  remote::InliningSwitch switched;
  bool deoptimized = false;
  bool done = false;
  std::string restore_line;
};

// The attach flags it reads.
struct ExactAttachFlags {
  bool allow_inlining = false;                      // --allow-inlining: leave the target as it runs
  std::optional<std::chrono::milliseconds> warmup;  // --warmup; empty: kDefaultWarmupNs
};

// Switches the target to exact attribution (or says in `options.notes` and on
// stderr why it cannot), recording what it changed in `exact`; kExitOk to go
// on with the windows, else the exit code (a failure, or Ctrl-C during the warm-up).
int SwitchToExactAttribution(const ExactAttachFlags& flags, const std::string& runtime,
                             remote::RemoteWindowOptions& options, ExactAttach& exact);

}  // namespace heapprof::cli
