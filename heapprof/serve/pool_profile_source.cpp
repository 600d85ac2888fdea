#include "heapprof/v8/pool_profile_source.h"

#include <utility>

#include "heapprof/symbolizer.h"

namespace heapprof {

PoolProfileSource::PoolProfileSource(Controller& controller, WorkerPool& pool, SessionOptions session,
                                     std::optional<SourceMapSearch> source_maps)
    : controller_(controller), pool_(pool), session_(std::move(session)), source_maps_(std::move(source_maps)) {}

PoolProfileSource::~PoolProfileSource() = default;

std::vector<TargetStatus> PoolProfileSource::Targets() { return pool_.Stats(); }

std::vector<CaptureFile> PoolProfileSource::Captures() { return pool_.Captures(); }

Result<Profile> PoolProfileSource::Window(const std::string& target, std::chrono::nanoseconds duration) {
  WindowRequest request{target, duration, session_};
  request.options.isolate_name = target;
  return Finish(controller_.Profile(request).get());
}

Result<Profile> PoolProfileSource::SinceContinuousStart(const std::string& target) {
  return Error(ErrorCode::kFailedPrecondition, "no continuous window is open on " + target);
}

Result<Profile> PoolProfileSource::Finish(Result<WindowProfile> window) {
  if (!window.ok()) return window.status();
  Profile profile = std::move(window->profile);
  if (source_maps_) {
    FileSourceMapProvider maps(*source_maps_);
    (void)Symbolize(profile, maps);
  }
  return profile;
}

}  // namespace heapprof
