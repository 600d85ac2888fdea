// Which inspector target `heapprof attach TARGET [--target NAME]` means: the
// one a HOST:PORT lists (picked by --target when it lists more), or a
// target's ws:// URL itself.
#pragma once

#include <string>

#include "heapprof/core/host_port.h"
#include "heapprof/core/status.h"
#include "heapprof/remote/devtools_client.h"

namespace heapprof::cli {

struct ChooseTargetArgs {
  std::string target;  // HOST:PORT or ws:// URL
  std::string name;    // --target: an id or title (or part of a title or URL)
  remote::Millis timeout;
};

// TARGET names a WebSocket URL rather than HOST:PORT (devtools_client refuses wss:// with a reason).
bool IsWebSocketUrl(const std::string& target);
// The target's WebSocket URL: the one listed (chosen by --target), or TARGET itself.
Result<remote::InspectorTarget> ChooseTarget(const ChooseTargetArgs& args);
// The inspector's HOST:PORT: TARGET itself, or the authority of its ws:// URL.
Result<remote::HostPort> InspectorOf(const std::string& target);

}  // namespace heapprof::cli
