// The ArrayBuffer memory of one isolate, counted. V8's heap limit covers the
// V8 heap only: the bytes behind ArrayBuffers and typed arrays live outside
// it, so without this a worker could hold gigabytes of Uint8Arrays (the whole
// output of a gzip bomb, say) under a 128 MiB limit.
#pragma once

#include <v8.h>

#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>

namespace heapprof::internal {

// An ArrayBuffer::Allocator that counts the bytes it hands out and calls
// `over_threshold` once the live bytes pass a threshold. It never refuses an
// allocation: V8 aborts the process when one made through its C++ API fails,
// so the isolate's owner decides instead (heapprof::Isolate collects garbage,
// then ends the script as at the heap limit when the bytes are still held).
class ArrayBufferBudget final : public v8::ArrayBuffer::Allocator {
 public:
  // `over_threshold` runs on the allocating thread, at most once until Rearm().
  ArrayBufferBudget(size_t threshold, std::function<void()> over_threshold);

  void* Allocate(size_t length) override;
  void* AllocateUninitialized(size_t length) override;
  void Free(void* data, size_t length) override;

  // Bytes of the ArrayBuffers V8 has not freed yet (garbage included until a GC frees it).
  size_t live_bytes() const { return live_.load(std::memory_order_relaxed); }
  // Sets the threshold and lets `over_threshold` run again.
  void Rearm(size_t threshold);

 private:
  void* Counted(void* data, size_t length);

  std::unique_ptr<v8::ArrayBuffer::Allocator> base_;
  std::function<void()> over_threshold_;
  std::atomic<size_t> live_{0};
  std::atomic<size_t> threshold_;
  std::atomic<bool> armed_{true};
};

}  // namespace heapprof::internal
