// `heapprof run --profile NS:NAME`: the window on one Durable Object's
// isolate. It opens when the runtime makes that object's isolate (its first
// event, before its module loads: WorkerOptions::on_durable_object_created)
// and closes at the end of the run; the worker's own isolate gets no window.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "heapprof/core/status.h"
#include "heapprof/runtime/durable_object_targets.h"
#include "heapprof/runtime/worker_runtime.h"
#include "heapprof/v8/controller.h"
#include "heapprof/v8/session.h"

namespace heapprof::cli {

class ObjectWindow {
 public:
  // `target` is "NS:NAME", NAME the idFromName name or a 64-hex id (either case).
  ObjectWindow(std::string target, SessionOptions session);
  ObjectWindow(const ObjectWindow&) = delete;
  ObjectWindow& operator=(const ObjectWindow&) = delete;

  // Sets options.on_durable_object_created: on the target's creation the
  // window opens and `opened` is called; if it cannot, `failed` is. Near the
  // object's heap limit the window closes early: `near_limit` gets its
  // in-use profile (on the object's thread, before its JS is terminated).
  void Install(WorkerOptions& options, std::function<void()> opened, std::function<void(Status)> failed,
               std::function<void(Result<WindowProfile>)> near_limit);
  // The window closed early: near the object's heap limit, or when the
  // object was evicted (its window is then the isolate's whole life).
  bool ended() const { return ended_; }
  // Closes the window: its profile, or kNotFound when the object was never
  // made (or kResourceExhausted when it closed near the heap limit).
  Result<WindowProfile> Close();

 private:
  std::string target_;
  std::optional<DurableObjectSelector> selector_;  // the object target_ names
  SessionOptions session_;
  std::optional<Session> open_;
  WorkerRuntime* runtime_ = nullptr;  // the object's, owned by the worker's runtime
  bool ended_ = false;
  std::optional<Result<WindowProfile>> evicted_;  // the window closed by the object's eviction
};

}  // namespace heapprof::cli
