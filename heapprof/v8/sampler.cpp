// The always-on sampler (include/heapprof/v8/sampler.h).
//
// One strategy on every V8: V8's sampler runs without the include-collected
// flags, so it keeps a sample exactly while its object lives, and a
// GC-prologue ledger records the samples of open windows before a GC can
// free them. Native liveness (is_live, Node 26) needs those flags, and with
// them V8 keeps every sample until the sampler stops: one Sample per sampled
// allocation for the isolate's whole life (docs/how-it-works.md has the
// numbers). Restarting the sampler to bound that would drop every live
// sample, which is what a near-limit capture or a leak session must see.
// So the always-on sampler uses the ledger everywhere; native liveness stays
// the strategy of a one-window Session, whose sampler stops at its end.
#include "heapprof/v8/sampler.h"

#include <v8-profiler.h>
#include <v8.h>

#include <algorithm>
#include <deque>
#include <limits>
#include <map>
#include <optional>
#include <vector>

#include "heapprof/core/stack_table.h"
#include "heapprof/v8/allocation_tree.h"
#include "heapprof/v8/gc.h"
#include "heapprof/v8/isolate_claims.h"

namespace heapprof {
namespace {

// With no window open, the interned stacks are dropped once they hold more
// than this many (the table only grows while the sampler lives; the node
// cache that points into it goes with it).
constexpr size_t kResetStacksAbove = 1u << 18;

// Copies the frames and stacks that `samples` use out of `table`, renumbering
// the samples' stacks: a snapshot carries only what it needs.
void CompactInto(const internal::StackTable& table, RawSnapshot& out) {
  const std::vector<StackNode>& stacks = table.stacks();
  const std::vector<Frame>& frames = table.frames();
  constexpr uint32_t kUnmapped = std::numeric_limits<uint32_t>::max();
  std::vector<uint32_t> stack_map(stacks.size(), kUnmapped);
  std::vector<uint32_t> frame_map(frames.size(), kUnmapped);
  stack_map[0] = 0;
  out.stacks.assign(1, StackNode{});
  out.frames.clear();
  std::vector<uint32_t> chain;
  for (RawSample& s : out.samples) {
    uint32_t id = static_cast<uint32_t>(s.stack);
    if (id >= stacks.size()) id = 0;
    chain.clear();
    for (uint32_t at = id; stack_map[at] == kUnmapped; at = static_cast<uint32_t>(stacks[at].parent)) {
      chain.push_back(at);
    }
    for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
      const StackNode& node = stacks[*it];
      uint32_t f = static_cast<uint32_t>(node.frame);
      if (frame_map[f] == kUnmapped) {
        frame_map[f] = static_cast<uint32_t>(out.frames.size());
        out.frames.push_back(frames[f]);
      }
      stack_map[*it] = static_cast<uint32_t>(out.stacks.size());
      out.stacks.push_back(StackNode{StackId{stack_map[static_cast<uint32_t>(node.parent)]}, FrameId{frame_map[f]}});
    }
    s.stack = StackId{stack_map[id]};
  }
}

}  // namespace

SamplerOptions SamplerOptionsFrom(const SessionOptions& options) {
  SamplerOptions out;
  out.interval_bytes = options.interval_bytes;
  out.max_stack_depth = options.max_stack_depth;
  out.full_gc = options.full_gc;
  out.max_samples = options.max_samples;
  return out;
}

class Sampler::Impl {
 public:
  struct Window {
    uint64_t first = 0;
    WindowLabels labels;
    bool capped = false;  // the ledger's cap refused some of its samples
    uint64_t prologue_snapshots_at_open = 0;
    int64_t prologue_nanos_at_open = 0;
  };
  // 8 bytes per sample id in the ledger; size 0 = not seen.
  struct Entry {
    uint32_t stack = 0;
    uint32_t size = 0;
  };

  v8::Isolate* isolate = nullptr;
  SamplerOptions options;
  int64_t start_unix_nanos = 0;
  uint64_t heap_limit_bytes = 0;

  std::unique_ptr<internal::StackTable> table = std::make_unique<internal::StackTable>();
  std::unique_ptr<internal::FrameResolver> frames = std::make_unique<internal::FrameResolver>(*table);
  internal::NodeStackCache node_stacks;

  std::map<uint64_t, Window> windows;  // by number; their first ids grow with the number
  uint64_t next_window = 1;
  std::deque<Entry> ledger;  // ids [ledger_base, ledger_base + size)
  uint64_t ledger_base = 0;
  uint64_t recorded = 0;  // entries with size != 0
  uint64_t max_id_seen = 0;
  bool attached = false;
  bool closing_gc = false;
  bool snapshotted_in_closing_gc = false;
  uint64_t prologue_snapshots = 0;
  int64_t prologue_nanos = 0;

  ~Impl() {
    Detach();
    isolate->GetHeapProfiler()->StopSamplingHeapProfiler();
    internal::ReleaseIsolate(isolate);
  }

  // The lowest id an open window covers.
  uint64_t Floor() const {
    return windows.empty() ? std::numeric_limits<uint64_t>::max() : windows.begin()->second.first;
  }

  void Attach() {
    if (attached) return;
    // Only the GCs that free objects. Not the start of incremental marking:
    // V8 has set up its marking worklists by then and allocating there breaks them.
    isolate->AddGCPrologueCallback(
        &Impl::OnGcPrologue, this,
        // (The minor collector's name differs between V8 versions: mask instead of naming it.)
        static_cast<v8::GCType>(v8::kGCTypeAll & ~(v8::kGCTypeIncrementalMarking | v8::kGCTypeProcessWeakCallbacks)));
    attached = true;
  }

  void Detach() {
    if (!attached) return;
    isolate->RemoveGCPrologueCallback(&Impl::OnGcPrologue, this);
    attached = false;
  }

  static void OnGcPrologue(v8::Isolate* isolate, v8::GCType, v8::GCCallbackFlags, void* data) {
    auto* self = static_cast<Impl*>(data);
    if (self->windows.empty()) return;
    // A closing snapshot's GCs run back to back with no JS between them: the
    // first prologue has seen every sample before any dies.
    if (self->closing_gc && self->snapshotted_in_closing_gc) return;
    self->snapshotted_in_closing_gc = self->closing_gc;
    internal::GcCallbackScope inside_gc;
    auto begin = std::chrono::steady_clock::now();
    ++self->prologue_snapshots;
    v8::HandleScope scope(isolate);
    std::unique_ptr<v8::AllocationProfile> profile(isolate->GetHeapProfiler()->GetAllocationProfile());
    if (profile) self->Record(*profile);
    self->prologue_nanos +=
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - begin).count();
  }

  // The interned stack of a node: from the cache, else resolved through the
  // tree (built at most once per snapshot, only when a node is new).
  StackId StackOf(v8::AllocationProfile& profile, std::optional<internal::AllocationTree>& tree, uint32_t node_id) {
    if (std::optional<StackId> hit = node_stacks.Find(node_id)) return *hit;
    if (!tree) tree.emplace(profile, &node_stacks);
    return tree->StackOf(isolate, node_id, *frames, *table);
  }

  // Copies into the ledger every sample an open window covers that it does
  // not hold yet; notes the highest id seen.
  void Record(v8::AllocationProfile& profile) {
    std::optional<internal::AllocationTree> tree;
    const uint64_t floor = Floor();
    for (const v8::AllocationProfile::Sample& s : profile.GetSamples()) {
      if (s.sample_id == 0) continue;
      max_id_seen = std::max<uint64_t>(max_id_seen, s.sample_id);
      if (s.sample_id < floor) continue;
      const uint64_t index = s.sample_id - ledger_base;
      if (index < ledger.size() && ledger[index].size != 0) continue;
      if (recorded >= options.max_samples) {
        for (auto& [n, w] : windows) {
          if (w.first <= s.sample_id) w.capped = true;
        }
        continue;
      }
      if (index >= ledger.size()) ledger.resize(index + 1);
      Entry& e = ledger[index];
      e.stack = static_cast<uint32_t>(StackOf(profile, tree, s.node_id));
      e.size = static_cast<uint32_t>(std::clamp<size_t>(s.size, 1, std::numeric_limits<uint32_t>::max()));
      ++recorded;
    }
  }

  // Releases ledger entries below the lowest open window; with none open,
  // the ledger and the GC callback go.
  void Trim() {
    if (windows.empty()) {
      Detach();
      ledger.clear();
      ledger.shrink_to_fit();
      recorded = 0;
      ledger_base = 0;
      MaybeResetStacks();
      return;
    }
    const uint64_t floor = Floor();
    while (ledger_base < floor && !ledger.empty()) {
      if (ledger.front().size != 0) --recorded;
      ledger.pop_front();
      ++ledger_base;
    }
    ledger_base = std::max(ledger_base, floor);
  }

  void MaybeResetStacks() {
    if (!windows.empty() || table->stacks().size() <= kResetStacksAbove) return;
    node_stacks.Clear();
    frames.reset();
    table = std::make_unique<internal::StackTable>();
    frames = std::make_unique<internal::FrameResolver>(*table);
  }

  // A full GC before a snapshot; its first prologue feeds the ledger.
  bool CollectGarbage(bool full_gc) {
    if (!full_gc || internal::InsideGcCallback()) return false;
    closing_gc = true;
    snapshotted_in_closing_gc = false;
    internal::CollectGarbageForSnapshot(isolate, options.full_gc);
    closing_gc = false;
    return true;
  }

  // The heap's used size, read after the GC and before the snapshot
  // allocates (ReadHeapSize in heapprof/v8/strategy.h says why).
  size_t UsedHeapBytes() const {
    v8::HeapStatistics heap;
    isolate->GetHeapStatistics(&heap);
    return heap.used_heap_size();
  }

  void FillInfo(WindowInfo& info, bool gc_ran, size_t heap_used_bytes) const {
    info.interval_bytes = options.interval_bytes;
    info.max_stack_depth = options.max_stack_depth;
    info.v8_version = v8::V8::GetVersion();
    info.strategy = "gc-prologue-ledger";
    info.gc_before_snapshot = gc_ran;
    info.heap_used_bytes = heap_used_bytes;
    info.heap_limit_bytes = heap_limit_bytes;
  }

  uint64_t LedgerBytes() const {
    return ledger.size() * sizeof(Entry) + table->MemoryBytes() + node_stacks.MemoryBytes();
  }
};

Sampler::Sampler(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Sampler::~Sampler() = default;

Result<std::unique_ptr<Sampler>> Sampler::Start(v8::Isolate* isolate, const SamplerOptions& options) {
  HEAPPROF_RETURN_IF_ERROR(internal::ClaimForSampling(isolate, internal::IsolateHolder::kSampler,
                                                      options.interval_bytes, options.max_stack_depth,
                                                      options.max_samples));
  v8::HandleScope scope(isolate);
  if (!isolate->GetHeapProfiler()->StartSamplingHeapProfiler(options.interval_bytes, options.max_stack_depth,
                                                             v8::HeapProfiler::kSamplingNoFlags)) {
    internal::ReleaseIsolate(isolate);
    return Error(ErrorCode::kUnavailable,
                 "V8's sampling heap profiler is already running on this isolate "
                 "(another tool, such as the inspector, holds it)");
  }
  auto impl = std::make_unique<Impl>();
  impl->isolate = isolate;
  impl->options = options;
  impl->start_unix_nanos = UnixNanosNow();
  if (options.heap_limit_bytes != 0) {
    impl->heap_limit_bytes = options.heap_limit_bytes;
  } else {
    v8::HeapStatistics heap;
    isolate->GetHeapStatistics(&heap);
    impl->heap_limit_bytes = heap.heap_size_limit();
  }
  return std::unique_ptr<Sampler>(new Sampler(std::move(impl)));
}

WindowMark Sampler::OpenWindow(const WindowLabels& labels) {
  Impl& s = *impl_;
  v8::HandleScope scope(s.isolate);
  // Every sample alive now was taken before the window; one taken and freed
  // before it has no object left to be seen by. So the window starts after
  // the highest id of this snapshot (or of any earlier one).
  std::unique_ptr<v8::AllocationProfile> profile(s.isolate->GetHeapProfiler()->GetAllocationProfile());
  if (profile) s.Record(*profile);
  WindowMark mark;
  mark.window = s.next_window++;
  mark.first_sample_id = s.max_id_seen + 1;
  mark.start_unix_nanos = UnixNanosNow();
  mark.start = std::chrono::steady_clock::now();
  if (s.windows.empty()) {
    s.ledger.clear();
    s.recorded = 0;
    s.ledger_base = mark.first_sample_id;
    s.Attach();
  }
  Impl::Window& w = s.windows[mark.window];
  w.first = mark.first_sample_id;
  w.labels = labels;
  w.prologue_snapshots_at_open = s.prologue_snapshots;
  w.prologue_nanos_at_open = s.prologue_nanos;
  return mark;
}

void Sampler::AbandonWindow(const WindowMark& mark) {
  impl_->windows.erase(mark.window);
  impl_->Trim();
}

Result<RawSnapshot> Sampler::CloseWindow(const WindowMark& mark, bool full_gc) {
  Impl& s = *impl_;
  auto found = s.windows.find(mark.window);
  if (found == s.windows.end()) return Error(ErrorCode::kFailedPrecondition, "the profiling window is not open");
  bool gc_ran = s.CollectGarbage(full_gc);
  const size_t heap_used = s.UsedHeapBytes();
  v8::HandleScope scope(s.isolate);
  // No profile: someone stopped V8's sampler under us (StopSamplingHeapProfiler
  // is not ours alone). The ledger still has the window's allocations.
  std::unique_ptr<v8::AllocationProfile> profile(s.isolate->GetHeapProfiler()->GetAllocationProfile());
  if (profile) s.Record(*profile);
  const Impl::Window w = found->second;
  const uint64_t first = w.first;
  const uint64_t last = s.max_id_seen;
  std::vector<uint64_t> live;
  if (profile) {
    for (const v8::AllocationProfile::Sample& sample : profile->GetSamples()) {
      if (sample.sample_id >= first) live.push_back(sample.sample_id);
    }
  }
  const bool stopped_under_us = !profile;
  profile.reset();
  std::sort(live.begin(), live.end());

  RawSnapshot out;
  uint64_t gaps = 0, in_range = 0;
  auto next_live = live.begin();
  for (uint64_t id = first; id <= last && last >= first; ++id) {
    ++in_range;
    const uint64_t index = id - s.ledger_base;
    const Impl::Entry* e = index < s.ledger.size() ? &s.ledger[index] : nullptr;
    if (e == nullptr || e->size == 0) {
      ++gaps;
      continue;
    }
    while (next_live != live.end() && *next_live < id) ++next_live;
    bool is_live = next_live != live.end() && *next_live == id;
    out.samples.push_back(RawSample{id, StackId{e->stack}, e->size, is_live});
  }
  CompactInto(*s.table, out);

  WindowInfo& info = out.info;
  s.FillInfo(info, gc_ran, heap_used);
  info.start_unix_nanos = mark.start_unix_nanos;
  info.duration_nanos =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - mark.start).count();
  info.isolate_name = w.labels.isolate_name;
  info.inlining_allowed = w.labels.inlining_allowed;
  info.prologue_snapshots = s.prologue_snapshots - w.prologue_snapshots_at_open;
  info.prologue_nanos = s.prologue_nanos - w.prologue_nanos_at_open;
  // Past the cap, unrecorded ids are dropped on purpose rather than missed.
  info.dropped_samples = w.capped ? gaps : 0;
  info.missing_sample_ids = w.capped ? 0 : gaps;
  if (stopped_under_us) {
    info.notes.push_back(
        "sampler_stopped: V8's sampler was stopped by someone else before the window closed; "
        "alloc_* holds what the ledger recorded, inuse_* is empty");
  }
  info.notes.push_back("ledger_bytes: " + std::to_string(s.LedgerBytes()));
  info.notes.push_back("sample_ids: " + (in_range ? std::to_string(first) + "-" + std::to_string(last) : "none"));
  info.notes.push_back("sampler: always on since " + std::to_string(s.start_unix_nanos) + " (unix ns)");

  s.windows.erase(mark.window);
  s.Trim();
  return out;
}

Result<RawSnapshot> Sampler::LiveSnapshot(bool full_gc) {
  Impl& s = *impl_;
  s.MaybeResetStacks();
  bool gc_ran = s.CollectGarbage(full_gc);
  const size_t heap_used = s.UsedHeapBytes();
  v8::HandleScope scope(s.isolate);
  std::unique_ptr<v8::AllocationProfile> profile(s.isolate->GetHeapProfiler()->GetAllocationProfile());
  if (!profile) return Error(ErrorCode::kInternal, "V8 returned no allocation profile");
  RawSnapshot out;
  std::optional<internal::AllocationTree> tree;
  for (const v8::AllocationProfile::Sample& sample : profile->GetSamples()) {
    s.max_id_seen = std::max<uint64_t>(s.max_id_seen, sample.sample_id);
    if (out.samples.size() >= s.options.max_samples) {
      ++out.info.dropped_samples;
      continue;
    }
    RawSample r;
    r.sample_id = sample.sample_id;
    r.stack = s.StackOf(*profile, tree, sample.node_id);
    r.size = sample.size;
    r.live = true;
    r.allocated = false;
    out.samples.push_back(r);
  }
  tree.reset();
  profile.reset();
  std::sort(out.samples.begin(), out.samples.end(),
            [](const RawSample& a, const RawSample& b) { return a.sample_id < b.sample_id; });
  CompactInto(*s.table, out);
  s.FillInfo(out.info, gc_ran, heap_used);
  out.info.start_unix_nanos = UnixNanosNow();
  out.info.duration_nanos = 0;
  out.info.notes.push_back("snapshot: every live sample (in use only; alloc_* belong to windows)");
  out.info.notes.push_back("last_sample_id: " + std::to_string(s.max_id_seen));
  out.info.notes.push_back("sampler: always on since " + std::to_string(s.start_unix_nanos) + " (unix ns)");
  return out;
}

const SamplerOptions& Sampler::options() const { return impl_->options; }

int64_t Sampler::start_unix_nanos() const { return impl_->start_unix_nanos; }

SamplerStats Sampler::stats() const {
  const Impl& s = *impl_;
  SamplerStats out;
  out.open_windows = s.windows.size();
  out.ledger_entries = s.recorded;
  out.ledger_bytes = s.LedgerBytes();
  out.last_sample_id = s.max_id_seen;
  out.prologue_snapshots = s.prologue_snapshots;
  out.prologue_nanos = s.prologue_nanos;
  out.interned_stacks = s.table->stacks().size() - 1;
  return out;
}

}  // namespace heapprof
