// Turns a RawSnapshot into a Profile: merges samples by (stack, size),
// scales them to unsampled estimates and lays out the pprof heap contract.
#pragma once

#include "heapprof/core/profile.h"
#include "heapprof/core/raw_snapshot.h"

namespace heapprof {

// Estimated number of real objects one sample of `size` bytes stands for,
// with V8's own scaling for a Poisson sampler of mean `interval` bytes.
double SampleScale(uint64_t size, uint64_t interval);

// The display name of a frame: anonymous functions get their position so
// that two of them never merge in a report.
std::string FrameDisplayName(const Frame& frame);

// Builds the heap profile (sample types alloc_objects, alloc_space,
// inuse_objects, inuse_space; numeric label "bytes"; metadata comments).
Profile BuildProfile(const RawSnapshot& snapshot);

}  // namespace heapprof
