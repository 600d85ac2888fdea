// Native liveness: for V8 whose AllocationProfile::Sample has is_live. The
// sampler keeps samples of collected objects (Include* flags), so one
// snapshot at Stop holds the whole window and is_live splits in-use from
// allocated. Compiled only where the headers have the feature.
#include "heapprof/v8/allocation_tree.h"
#include "heapprof/v8/gc.h"
#include "heapprof/v8/strategy.h"

namespace heapprof::internal {
namespace {

template <typename HeapProfiler, typename Sample>
class NativeLivenessStrategy final : public Strategy {
 public:
  explicit NativeLivenessStrategy(const SessionOptions& options) : options_(options), frames_(table_) {}

  const char* name() const override { return "native-liveness"; }
  v8::HeapProfiler::SamplingFlags sampling_flags() const override {
    return static_cast<v8::HeapProfiler::SamplingFlags>(HeapProfiler::kSamplingIncludeObjectsCollectedByMajorGC |
                                                        HeapProfiler::kSamplingIncludeObjectsCollectedByMinorGC);
  }
  void OnStarted(v8::Isolate*) override {}
  void Detach(v8::Isolate*) override {}

  Status Finish(v8::Isolate* isolate, RawSnapshot& out) override {
    if (options_.gc_before_snapshot && !InsideGcCallback()) CollectGarbageForSnapshot(isolate, options_.full_gc);
    ReadHeapSize(isolate, out);
    v8::HandleScope scope(isolate);
    std::unique_ptr<v8::AllocationProfile> profile(isolate->GetHeapProfiler()->GetAllocationProfile());
    if (!profile) return Error(ErrorCode::kInternal, "V8 returned no allocation profile");
    AllocationTree tree(*profile);
    uint64_t max_id = 0;
    for (const Sample& s : profile->GetSamples()) {
      max_id = std::max<uint64_t>(max_id, s.sample_id);
      if (out.samples.size() >= options_.max_samples) {
        ++out.info.dropped_samples;
        continue;
      }
      out.samples.push_back(RawSample{s.sample_id, tree.StackOf(isolate, s.node_id, frames_, table_), s.size,
                                      static_cast<bool>(s.is_live)});
    }
    if (out.info.dropped_samples == 0) out.info.missing_sample_ids = max_id - out.samples.size();
    out.frames = table_.TakeFrames();
    out.stacks = table_.TakeStacks();
    return Status::Ok();
  }

 private:
  SessionOptions options_;
  StackTable table_;
  FrameResolver frames_;
};

}  // namespace

std::unique_ptr<Strategy> MakeNativeLivenessStrategy(const SessionOptions& options) {
  if constexpr (kNativeLiveness) {
    return std::make_unique<NativeLivenessStrategy<v8::HeapProfiler, v8::AllocationProfile::Sample>>(options);
  } else {
    (void)options;
    return nullptr;
  }
}

}  // namespace heapprof::internal
