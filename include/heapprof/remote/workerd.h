// workerd, Cloudflare's open-source Workers runtime, as a child process that
// serves one worker on loopback with its DevTools inspector open: the real
// runtime behind `heapprof run --runtime workerd`. V8-free.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "heapprof/core/status.h"
#include "heapprof/remote/devtools_client.h"
#include "heapprof/remote/workerd_config.h"

namespace heapprof::remote {

// A free TCP port on 127.0.0.1 (bound, then released for the child to take).
Result<uint16_t> FreeLoopbackPort();

// A TCP socket listening on 127.0.0.1 at a port the system chose, opened
// close-on-exec; a child it is handed to owns the port with no race.
struct LoopbackListener {
  static Result<LoopbackListener> Open();
  LoopbackListener() = default;
  LoopbackListener(LoopbackListener&& other) noexcept : fd(std::exchange(other.fd, -1)), port(other.port) {}
  LoopbackListener& operator=(LoopbackListener&&) = delete;
  ~LoopbackListener();
  void Close();
  int fd = -1;
  uint16_t port = 0;
};

// The workerd binary: `flag` (--workerd) when given, else $HEAPPROF_WORKERD,
// else the project's .deps/workerd/bin/workerd in a folder above this
// executable, else workerd on PATH; else ".deps/workerd/bin/workerd" (Start
// then says it is missing).
std::string FindWorkerd(const std::string& flag);

// Which of `flags` workerd's V8 did not know: V8 names such a flag in its
// startup output ("flag --x" / "flag \"--x"), which workerd passes through.
std::vector<std::string> UnknownV8Flags(const std::string& startup_output, const std::vector<std::string>& flags);

// A running workerd. Move-only; the destructor stops it (SIGTERM, then
// SIGKILL), and the child dies with heapprof too (PR_SET_PDEATHSIG), so no
// exit path leaves it behind. It runs in a process group of its own, so a
// Ctrl-C meant for heapprof does not end it mid-window.
class WorkerdProcess {
 public:
  // Writes the config into a temporary folder, starts workerd on loopback
  // (the worker's socket handed over listening, the inspector on a free
  // port, tried again if another process takes that port first) and waits
  // until both the worker and the inspector answer.
  static Result<WorkerdProcess> Start(const WorkerdSpec& spec, Millis timeout);

  WorkerdProcess(WorkerdProcess&& other) noexcept;
  WorkerdProcess& operator=(WorkerdProcess&& other) noexcept;
  WorkerdProcess(const WorkerdProcess&) = delete;
  WorkerdProcess& operator=(const WorkerdProcess&) = delete;
  ~WorkerdProcess();

  HostPort http() const { return {"127.0.0.1", http_port_}; }
  HostPort inspector() const { return {"127.0.0.1", inspector_port_}; }
  const std::string& module_name() const { return module_name_; }
  // What workerd printed so far (stdout and stderr: console output, errors).
  std::string Output() const;
  // What workerd printed after byte `*offset` of its log, whole lines only;
  // moves `*offset` past them.
  std::string OutputSince(uint64_t* offset) const;
  // Whether the process is still running.
  bool Running();
  // Stops workerd and waits for it.
  void Stop();

 private:
  WorkerdProcess() = default;
  // One start of workerd on a fresh socket and inspector port.
  Status Launch(const WorkerdSpec& spec, const std::vector<WorkerdModule>& modules, Millis timeout);
  pid_t pid_ = -1;
  uint16_t http_port_ = 0;
  uint16_t inspector_port_ = 0;
  std::string dir_;  // the temporary folder (config, log, the worker's link)
  std::string module_name_;
};

}  // namespace heapprof::remote
