// `heapprof run --profile NS:NAME`: the window on one Durable Object's isolate.
#include "tools/heapprof/run_object.h"

#include <utility>

namespace heapprof::cli {

ObjectWindow::ObjectWindow(std::string target, SessionOptions session)
    : target_(std::move(target)), session_(std::move(session)) {
  // run.cpp refused a target without a name; an empty one (no --profile NS:NAME) matches nothing.
  if (Result<DurableObjectSelector> parsed = DurableObjectSelector::Parse(target_); parsed.ok()) {
    selector_ = std::move(parsed).value();
  }
  session_.isolate_name = target_;
}

void ObjectWindow::Install(WorkerOptions& options, std::function<void()> opened, std::function<void(Status)> failed,
                           std::function<void(Result<WindowProfile>)> near_limit) {
  auto is_target = [this](const DurableObjectReport& o) { return selector_ && selector_->Matches(o); };
  options.on_durable_object_created = [this, is_target, opened = std::move(opened), failed = std::move(failed)](
                                          const DurableObjectReport& o, WorkerRuntime& object) {
    if (open_ || ended_ || !is_target(o)) return;
    Result<Session> started = object.StartSession(session_);
    if (!started.ok()) return failed(started.status());
    open_.emplace(std::move(started).value());
    runtime_ = &object;
    opened();
  };
  options.on_durable_object_near_heap_limit = [this, is_target, near_limit = std::move(near_limit)](
                                                  const DurableObjectReport& o, WorkerRuntime& object) {
    if (!open_ || &object != runtime_ || !is_target(o)) return;
    Session session = std::move(*open_);
    open_.reset();
    ended_ = true;
    Result<Profile> profile = object.StopSession(std::move(session));
    if (!profile.ok()) return near_limit(profile.status());
    near_limit(WindowProfile{target_, std::move(profile).value(), ""});
  };
  options.on_durable_object_evicted = [this, is_target](const DurableObjectReport& o, WorkerRuntime& object) {
    if (!open_ || &object != runtime_ || !is_target(o)) return;
    Session session = std::move(*open_);
    open_.reset();
    ended_ = true;
    Result<Profile> profile = object.StopSession(std::move(session));
    if (!profile.ok()) {
      evicted_.emplace(profile.status());
    } else {
      evicted_.emplace(WindowProfile{target_, std::move(profile).value(), ""});
    }
  };
}

Result<WindowProfile> ObjectWindow::Close() {
  if (evicted_) return std::move(*evicted_);
  if (ended_) {
    return Error(ErrorCode::kResourceExhausted, "Durable Object " + target_ + " reached its heap limit");
  }
  if (!open_) {
    return Error(ErrorCode::kNotFound, "--profile " + target_ +
                                           ": that Durable Object received no event in the run (no request reached "
                                           "it), so no window opened");
  }
  Session session = std::move(*open_);
  open_.reset();
  HEAPPROF_ASSIGN_OR_RETURN(Profile profile, runtime_->StopSession(std::move(session)));
  return WindowProfile{target_, std::move(profile), ""};
}

}  // namespace heapprof::cli
