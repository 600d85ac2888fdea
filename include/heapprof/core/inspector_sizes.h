// V8's inspector (HeapProfiler.getSamplingProfile, DevTools' .heapprofile)
// reports each sample's size as the object's size times V8's own estimate of
// how many objects the sample stands for, rounded: size x round(1 / (1 -
// exp(-size / interval))). heapprof scales samples itself (BuildProfile), so a
// window read over the inspector must get the object size back first, or its
// bytes are scaled twice (a small object's ~1.58x too much).
#pragma once

#include <cstdint>

namespace heapprof {

// V8's rounded estimate of the objects one sample of `size` bytes stands for
// at `interval` bytes (never 0).
uint64_t InspectorSampleCount(uint64_t size, uint64_t interval);

// The object size behind an inspector's sample size at `interval`: a size s
// with s x InspectorSampleCount(s, interval) == inspector_size. Large objects
// (one object per sample) come back exactly. For small ones the rounding maps
// several sizes to one value (at 32 KiB, objects of 32, 40 and 80 bytes all
// read 32800): the smallest is returned, so the bytes (what the value is
// made of) are kept within half an object and the object count is the
// largest the value allows. When no size fits (a reply not made by V8's
// rounding) the real-valued solution of s / (1 - exp(-s / interval)) ==
// inspector_size is rounded.
uint64_t InspectorObjectSize(uint64_t inspector_size, uint64_t interval);

}  // namespace heapprof
