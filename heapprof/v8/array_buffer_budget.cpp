// Counting an isolate's ArrayBuffer memory (see array_buffer_budget.h).
#include "heapprof/v8/array_buffer_budget.h"

#include <utility>

namespace heapprof::internal {

ArrayBufferBudget::ArrayBufferBudget(size_t threshold, std::function<void()> over_threshold)
    : base_(v8::ArrayBuffer::Allocator::NewDefaultAllocator()),
      over_threshold_(std::move(over_threshold)),
      threshold_(threshold) {}

void* ArrayBufferBudget::Allocate(size_t length) { return Counted(base_->Allocate(length), length); }

void* ArrayBufferBudget::AllocateUninitialized(size_t length) {
  return Counted(base_->AllocateUninitialized(length), length);
}

// V8 may free backing stores on its GC threads, hence the atomics.
void ArrayBufferBudget::Free(void* data, size_t length) {
  base_->Free(data, length);
  live_.fetch_sub(length, std::memory_order_relaxed);
}

void ArrayBufferBudget::Rearm(size_t threshold) {
  threshold_.store(threshold, std::memory_order_relaxed);
  armed_.store(true);
}

void* ArrayBufferBudget::Counted(void* data, size_t length) {
  if (data == nullptr) return nullptr;
  size_t live = live_.fetch_add(length, std::memory_order_relaxed) + length;
  if (live > threshold_.load(std::memory_order_relaxed) && armed_.exchange(false) && over_threshold_) {
    over_threshold_();
  }
  return data;
}

}  // namespace heapprof::internal
