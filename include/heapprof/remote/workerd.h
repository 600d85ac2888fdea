// workerd, Cloudflare's open-source Workers runtime, as a child process that
// serves one worker on loopback with its DevTools inspector open: the real
// runtime behind `heapprof run --runtime workerd`. V8-free.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

#include "heapprof/remote/devtools_client.h"
#include "heapprof/core/status.h"
#include "heapprof/workload/worker_config.h"

namespace heapprof::remote {

// The compatibility date of a worker whose configuration gives none.
inline constexpr char kDefaultCompatibilityDate[] = "2024-09-23";

// One binding of the worker's env in workerd's config.
struct WorkerdBinding {
  enum class Kind { kText, kJson };
  std::string name;
  Kind kind = Kind::kText;
  std::string value;  // the text, or the JSON text
};

// What workerd should serve and how.
struct WorkerdSpec {
  std::string binary;              // the workerd executable
  std::string worker;              // one script: an ES module (export default { fetch }) or a service-worker script
  std::string compatibility_date = kDefaultCompatibilityDate;
  std::vector<std::string> compatibility_flags;
  std::vector<WorkerdBinding> bindings;  // env: vars (text or JSON) and secrets (text)
  std::vector<std::string> v8_flags;  // the config's v8Flags
};

// What `heapprof run --runtime workerd` honours of a worker's configuration.
RuntimeSupport WorkerdRuntimeSupport();

// The env bindings of a configuration: a string var or a secret as text, any
// other var as JSON.
std::vector<WorkerdBinding> WorkerdBindings(const WorkerConfig& config);

// Whether the script is an ES module (it has an `export` statement) rather
// than a service-worker script.
bool LooksLikeEsModule(std::string_view script);

// The workerd config (Cap'n Proto text) serving `module_name` (a file beside
// the config) on `http`, with the spec's compatibility date and v8Flags.
std::string WorkerdConfig(const WorkerdSpec& spec, const std::string& module_name, bool es_module, uint16_t http_port);

// A free TCP port on 127.0.0.1 (bound, then released for the child to take).
Result<uint16_t> FreeLoopbackPort();

// A running workerd. Move-only; the destructor stops it (SIGTERM, then
// SIGKILL), and the child dies with heapprof too (PR_SET_PDEATHSIG), so no
// exit path leaves it behind. It runs in a process group of its own, so a
// Ctrl-C meant for heapprof does not end it mid-window.
class WorkerdProcess {
 public:
  // Writes the config into a temporary folder, starts workerd on free
  // loopback ports and waits until both the worker and the inspector answer.
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
  // Whether the process is still running.
  bool Running();
  // Stops workerd and waits for it.
  void Stop();

 private:
  WorkerdProcess() = default;
  pid_t pid_ = -1;
  uint16_t http_port_ = 0;
  uint16_t inspector_port_ = 0;
  std::string dir_;  // the temporary folder (config, log, the worker's link)
  std::string module_name_;
};

}  // namespace heapprof::remote
