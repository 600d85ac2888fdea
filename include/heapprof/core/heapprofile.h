// Chrome DevTools .heapprofile JSON (what `node --heap-prof` and the
// Memory panel's "Allocation sampling" write), out of and into the model.
//
// What survives a trip through .heapprofile, and what does not:
// - Export writes ONE sample type (default inuse_space) as the node tree's
//   selfSize; the other three, the alloc/in-use split, comments, period and
//   time are lost. Each profile sample becomes one samples[] entry whose size
//   is its value, so object counts are lost too.
// - Import gives a Profile whose alloc_* and inuse_* are both what the file
//   holds: a file from `node --heap-prof` holds only the samples still alive
//   when it was written, and their sizes are sampled sizes, not scaled
//   estimates (the file does not record the sampling interval).
//   selfSize is the space per node; samples[] give object sizes and counts
//   (nodes without samples get space but 0 objects). samples[] entries naming
//   a node absent from the tree (V8 records its own allocations made while
//   writing the file) are dropped and counted in a comment.
// - Function names, URLs and 0-based line/column numbers round-trip; heapprof
//   writes line = the function's start line, as V8 does.
#pragma once

#include <string>
#include <string_view>

#include "heapprof/core/profile.h"
#include "heapprof/core/raw_snapshot.h"
#include "heapprof/core/status.h"

namespace heapprof {

struct HeapProfileExportOptions {
  // Sample type by name or index; empty = the profile's default (inuse_space).
  std::string sample_type;
};

// The profile as .heapprofile JSON: {"head": {...tree...}, "samples": [...]}.
Result<std::string> EncodeHeapProfile(const Profile& profile, const HeapProfileExportOptions& options = {});
// Parses .heapprofile JSON into a heap profile with the four usual sample types.
Result<Profile> DecodeHeapProfile(std::string_view json);

// What one sampling window's samples stand for when they become RawSamples.
struct SampledWindow {
  bool live = false;      // the window sampled without the include-collected flags: what it holds is alive
  bool allocated = true;  // its samples count as allocations of the profile (alloc_*)
  // The interval the window sampled at (HeapProfiler.startSampling's
  // samplingInterval). The inspector's sizes are object size x V8's rounded
  // count at this interval; they are turned back into object sizes with it.
  uint64_t interval_bytes = 0;
};

// The same tree as V8's inspector returns it from HeapProfiler.getSamplingProfile
// (the result object {"profile": {...}} or the bare {head, samples}) as a
// RawSnapshot: one RawSample per samples[] entry, its size the object size
// (InspectorObjectSize at window.interval_bytes, which must be set), so that
// BuildProfile scales it with the window's interval like an embedded window.
// Only frames, stacks and samples are filled; the caller sets `info`.
Result<RawSnapshot> DecodeSamplingProfile(std::string_view json, const SampledWindow& window);

}  // namespace heapprof
