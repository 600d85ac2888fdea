// GC-prologue ledger: for V8 without per-sample liveness. V8 drops a sample
// when its object dies, and objects die only inside a GC, so a snapshot in
// every GC prologue sees every sample before it can vanish.
#include <chrono>
#include <optional>
#include <vector>

#include "heapprof/v8/allocation_tree.h"
#include "heapprof/v8/gc.h"
#include "heapprof/v8/strategy.h"

namespace heapprof::internal {
namespace {

class LedgerStrategy final : public Strategy {
 public:
  explicit LedgerStrategy(const SessionOptions& options) : options_(options), frames_(table_) {}
  ~LedgerStrategy() override = default;

  const char* name() const override { return "gc-prologue-ledger"; }
  v8::HeapProfiler::SamplingFlags sampling_flags() const override {
    // Never kSamplingForceGC: it would collect garbage inside our prologue snapshots.
    return v8::HeapProfiler::kSamplingNoFlags;
  }

  void OnStarted(v8::Isolate* isolate) override {
    // Only the GCs that free objects. Not the start of incremental marking:
    // V8 has set up its marking worklists by then and allocating there breaks them.
    isolate->AddGCPrologueCallback(
        &LedgerStrategy::OnGcPrologue, this,
        // (The minor collector's name differs between V8 versions: mask instead of naming it.)
        static_cast<v8::GCType>(v8::kGCTypeAll & ~(v8::kGCTypeIncrementalMarking | v8::kGCTypeProcessWeakCallbacks)));
    attached_ = true;
  }

  void Detach(v8::Isolate* isolate) override {
    if (!attached_) return;
    isolate->RemoveGCPrologueCallback(&LedgerStrategy::OnGcPrologue, this);
    attached_ = false;
  }

  uint64_t prologue_snapshots() const override { return prologue_snapshots_; }

  Status Finish(v8::Isolate* isolate, RawSnapshot& out) override {
    if (options_.gc_before_snapshot && !InsideGcCallback()) {
      // Full GCs, so that unreachable garbage is not counted as in use. The
      // first GC's prologue records every sample before any dies; no JS runs
      // between V8's back-to-back GCs here, so the later prologues are skipped.
      stopping_ = true;
      CollectGarbageForSnapshot(isolate, options_.full_gc);
    }
    ReadHeapSize(isolate, out);
    std::vector<uint64_t> live_ids;
    Record(isolate, &live_ids);
    Detach(isolate);

    for (uint64_t id : live_ids) {
      if (id - 1 < ledger_.size()) ledger_[id - 1].live = true;
    }
    out.samples.reserve(recorded_);
    uint64_t gaps = 0;
    for (size_t i = 0; i < std::min<uint64_t>(ledger_.size(), max_recorded_id_); ++i) {
      const Entry& e = ledger_[i];
      if (e.size == 0) {
        ++gaps;
        continue;
      }
      out.samples.push_back(RawSample{i + 1, StackId{e.stack}, e.size, e.live != 0});
    }
    // Past the cap, unrecorded ids are dropped on purpose rather than missed.
    out.info.dropped_samples = capped_ ? max_id_seen_ - recorded_ : 0;
    out.info.missing_sample_ids = capped_ ? 0 : gaps;
    out.info.prologue_snapshots = prologue_snapshots_;
    out.info.prologue_nanos = prologue_nanos_;
    out.frames = table_.TakeFrames();
    out.stacks = table_.TakeStacks();
    out.info.notes.push_back("ledger_bytes: " + std::to_string(LedgerBytes()));
    return Status::Ok();
  }

  size_t LedgerBytes() const {
    return ledger_.capacity() * sizeof(Entry) + table_.MemoryBytes() + node_stacks_.MemoryBytes();
  }

 private:
  // 8 bytes per sample id: sample ids are dense (1..N) within a window.
  struct Entry {
    uint32_t stack = 0;
    uint32_t size : 31 = 0;  // 0 = not seen
    uint32_t live : 1 = 0;
  };

  static void OnGcPrologue(v8::Isolate* isolate, v8::GCType, v8::GCCallbackFlags, void* data) {
    auto* self = static_cast<LedgerStrategy*>(data);
    if (self->stopping_ && self->snapshotted_while_stopping_) return;
    self->snapshotted_while_stopping_ = self->stopping_;
    GcCallbackScope inside_gc;
    auto begin = std::chrono::steady_clock::now();
    ++self->prologue_snapshots_;
    self->Record(isolate, nullptr);
    self->prologue_nanos_ +=
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - begin).count();
  }

  // A node's interned stack: from the cache kept across the window's
  // snapshots (V8 never changes a node while its sampler runs), else through
  // the tree, indexed at most once per snapshot and only for a new node. So a
  // steady window's prologue walk costs a lookup per new sample, not a copy of
  // the tree (bench: snapshot_bench, "node cache").
  StackId StackOf(v8::Isolate* isolate, v8::AllocationProfile& profile, std::unique_ptr<AllocationTree>& tree,
                  uint32_t node_id) {
    if (std::optional<StackId> hit = node_stacks_.Find(node_id)) return *hit;
    if (!tree) tree = std::make_unique<AllocationTree>(profile, &node_stacks_);
    return tree->StackOf(isolate, node_id, frames_, table_);
  }

  // Copies every sample not yet in the ledger; collects all ids when asked.
  void Record(v8::Isolate* isolate, std::vector<uint64_t>* all_ids) {
    v8::HandleScope scope(isolate);
    std::unique_ptr<v8::AllocationProfile> profile(isolate->GetHeapProfiler()->GetAllocationProfile());
    if (!profile) return;
    std::unique_ptr<AllocationTree> tree;  // built only when there is something new
    for (const v8::AllocationProfile::Sample& s : profile->GetSamples()) {
      if (s.sample_id == 0) continue;
      if (all_ids) all_ids->push_back(s.sample_id);
      max_id_seen_ = std::max(max_id_seen_, s.sample_id);
      if (s.sample_id <= ledger_.size() && ledger_[s.sample_id - 1].size != 0) continue;
      if (recorded_ >= options_.max_samples) {
        capped_ = true;
        continue;
      }
      if (s.sample_id > ledger_.size()) {
        ledger_.resize(std::max<size_t>(s.sample_id, ledger_.size() + ledger_.size() / 2));
      }
      Entry& e = ledger_[s.sample_id - 1];
      e.stack = static_cast<uint32_t>(StackOf(isolate, *profile, tree, s.node_id));
      e.size = static_cast<uint32_t>(std::min<size_t>(s.size, (1u << 31) - 1));
      max_recorded_id_ = std::max(max_recorded_id_, s.sample_id);
      ++recorded_;
    }
  }

  SessionOptions options_;
  StackTable table_;
  FrameResolver frames_;
  NodeStackCache node_stacks_;  // into table_, for this window's sampler
  std::vector<Entry> ledger_;
  uint64_t recorded_ = 0;
  uint64_t max_id_seen_ = 0;
  uint64_t max_recorded_id_ = 0;
  bool capped_ = false;
  uint64_t prologue_snapshots_ = 0;
  int64_t prologue_nanos_ = 0;
  bool attached_ = false;
  bool stopping_ = false;
  bool snapshotted_while_stopping_ = false;
};

}  // namespace

std::unique_ptr<Strategy> MakeLedgerStrategy(const SessionOptions& options) {
  return std::make_unique<LedgerStrategy>(options);
}

}  // namespace heapprof::internal
