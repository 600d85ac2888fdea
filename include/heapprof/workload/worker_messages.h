// The requests heapprof's worker runtime hands to a worker and what the worker
// answered: plain data, V8-free, so request files and reports are core code.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "heapprof/core/http_message.h"
#include "heapprof/core/status.h"

namespace heapprof {

// One request handed to the worker.
struct WorkerRequest {
  std::string method = "GET";
  std::string url;
  HttpHeaders headers;
  std::string body;  // bytes; request.text() / request.json() / request.arrayBuffer(); empty for none
};

// What a handler answered: status, reason (response.statusText), headers
// (lower-case names, in Headers iteration order) and the body's bytes (a
// string body as UTF-8); the HTTP response heapprof's server sends as it is.
using WorkerResponse = HttpResponse;

// Why a request handed to a worker got no response, said where it failed
// (the runtime, the pool of replicas) so that callers switch on the kind,
// never on the text of the message.
enum class WorkerFailure {
  kThrew,        // the handler (or a fetch listener) threw
  kRejected,     // its promise, or a ctx.waitUntil() promise, was rejected
  kBadResponse,  // it answered no Response, or a Response whose body could not be read
  kStalled,      // its promise never settled (nothing left to run), or its timers ran away
  kTimedOut,     // it ran past the time limit and its JavaScript was terminated
  kHeapLimit,    // the worker's isolate reached its heap limit
  kTerminated,   // its JavaScript was ended from another thread (Terminate: Ctrl-C, a shutdown)
  kNotRun,       // it never ran: no worker loaded, a re-load failed, the replica stopping
  kInternal,     // the runtime itself failed
};

// What one dispatch came to: the worker's response, or the error users see
// (status()) with its kind (failure()).
class DispatchResult : public Result<WorkerResponse> {
 public:
  DispatchResult(WorkerResponse response) : Result(std::move(response)) {}  // NOLINT: implicit by design
  DispatchResult(WorkerFailure kind, Status status) : Result(std::move(status)), failure_(kind) {}
  // `status` names the request ("GET https://x/: ..."); `reason` is the same
  // failure without it, for reports that group failures over many requests.
  DispatchResult(WorkerFailure kind, Status status, std::string reason)
      : Result(std::move(status)), failure_(kind), reason_(std::move(reason)) {}
  // Why there is no response; meaningful only when !ok().
  WorkerFailure failure() const { return failure_; }
  // The failure without the request it happened to (status().message() when
  // the message names none); meaningful only when !ok().
  const std::string& reason() const { return reason_ ? *reason_ : status().message(); }

 private:
  WorkerFailure failure_ = WorkerFailure::kInternal;
  std::optional<std::string> reason_;
};

}  // namespace heapprof
