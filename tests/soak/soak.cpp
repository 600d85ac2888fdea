// heapprof_soak [WINDOWS]: opens and closes WINDOWS consecutive profiling
// windows (default 1000) on one busy isolate and watches the process's
// resident memory. Each window serves a slice of a workload that allocates
// garbage and retains a rotating cache (entries are added and released over
// time), then the window is stopped, built, encoded as gzipped pprof and
// validated, as `heapprof run` would.
//
// It prints the memory after window 1, 10, 100, 1000, ... (and 200, 300, ...)
// and after the last one, and exits 1 when, after the warm-up (window 100, or
// half of a run shorter than 200), the RSS or the bytes in use in malloc grew
// by more than 5 %. Before each measurement V8 and malloc give their free pages
// back (a low-memory GC, malloc_trim), so that the RSS shows what is held, not
// what the allocators keep cached: without that, RSS creeps by ~5 % over 1000
// windows with or without profiling (V8 grows its heap's capacity lazily and
// glibc keeps freed arena pages), which would hide a real leak. "raw RSS" is
// the number before that release. Under AddressSanitizer (whose quarantine
// holds freed memory by design) the numbers are printed but not judged:
// LeakSanitizer checks the exit instead.
#include <malloc.h>
#include <unistd.h>

#include <v8.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "heapprof/core/pprof.h"
#include "heapprof/core/profile_builder.h"
#include "heapprof/v8/session.h"
#include "heapprof/v8/v8_host.h"

namespace {

constexpr double kMaxGrowth = 0.05;
constexpr long kDefaultWindows = 1000;
constexpr long kWarmupWindows = 100;

// A service-like workload: per call, request garbage (JSON round trips,
// strings, short arrays) plus a cache keyed by a rotating id whose old
// entries are evicted, so the retained set turns over but stays bounded.
constexpr const char* kWorkload = R"JS(
const cache = new Map();
const order = [];
function handle(i) {
  const body = JSON.stringify({ id: i, tags: ['a' + i, 'b' + (i % 7)], at: i * 3 });
  const parsed = JSON.parse(body);
  const parts = [];
  for (let k = 0; k < 20; ++k) parts.push(parsed.tags[k & 1] + ':' + k);
  return parts.join(',').length;
}
function remember(window, n) {
  const entry = [];
  for (let k = 0; k < n; ++k) entry.push({ window, k, pad: new Array(32).fill(k) });
  cache.set(window, entry);
  order.push(window);
  while (order.length > 40) cache.delete(order.shift());
}
function tick(window) {
  let total = 0;
  for (let i = 0; i < 400; ++i) total += handle(window * 400 + i);
  remember(window, 200);
  return total;
}
)JS";

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kJudgeGrowth = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kJudgeGrowth = false;
#else
constexpr bool kJudgeGrowth = true;
#endif
#else
constexpr bool kJudgeGrowth = true;
#endif

// Resident set size of this process in KiB (from /proc/self/statm).
long RssKiB() {
  std::ifstream statm("/proc/self/statm");
  long size_pages = 0, resident_pages = 0;
  if (!(statm >> size_pages >> resident_pages)) return -1;
  return resident_pages * (::sysconf(_SC_PAGESIZE) / 1024);
}

// 1, 10, 100, ... and every multiple of the decade below (200, 300, ...) from 100 on.
bool IsReportPoint(long window, long last) {
  if (window == last) return true;
  long decade = 1;
  while (decade * 10 <= window) decade *= 10;
  return window == decade || (decade >= 100 && window % decade == 0);
}

// Bytes malloc has handed out and not taken back (heapprof's and V8's C++ side).
long MallocKiB() { return static_cast<long>(mallinfo2().uordblks / 1024); }

struct Memory {
  long raw_rss_kib = 0;  // as the allocators left it
  long rss_kib = 0;      // after V8 and malloc returned their free pages
  long malloc_kib = 0;
  size_t v8_heap_kib = 0;  // V8's heap pages in RAM
};

Memory Measure(v8::Isolate* isolate) {
  Memory m;
  m.raw_rss_kib = RssKiB();
  isolate->LowMemoryNotification();
  malloc_trim(0);
  m.rss_kib = RssKiB();
  m.malloc_kib = MallocKiB();
  v8::HeapStatistics heap;
  isolate->GetHeapStatistics(&heap);
  m.v8_heap_kib = heap.total_physical_size() / 1024;
  return m;
}

// Growth from `before` to `after` as a fraction; 0 when nothing was measured.
double Growth(long before, long after) {
  return before > 0 ? static_cast<double>(after - before) / static_cast<double>(before) : 0.0;
}

int Soak(long windows) {
  heapprof::IsolateOptions iso_options;
  iso_options.name = "soak";
  iso_options.heap_limit_bytes = 256u * 1024 * 1024;
  heapprof::Result<heapprof::Isolate> iso = heapprof::Isolate::Create(iso_options);
  if (!iso.ok()) {
    std::fprintf(stderr, "heapprof_soak: %s\n", iso.status().message().c_str());
    return 1;
  }
  v8::Isolate::Scope isolate_scope(iso->get());
  v8::HandleScope handles(iso->get());
  if (auto loaded = iso->RunScript(kWorkload, "soak.js"); !loaded.ok()) {
    std::fprintf(stderr, "heapprof_soak: the workload did not load: %s\n", loaded.status().message().c_str());
    return 1;
  }
  heapprof::SessionOptions options;
  options.interval_bytes = 4 * 1024;  // about a hundred samples a window
  options.isolate_name = "soak";

  const long warmup = windows >= 2 * kWarmupWindows ? kWarmupWindows : windows / 2;
  Memory warm, last;
  uint64_t samples = 0;
  std::printf("%10s %12s %12s %12s %12s %10s\n", "window", "RSS KiB", "raw RSS KiB", "malloc KiB", "V8 heap KiB",
              "samples");
  for (long w = 1; w <= windows; ++w) {
    auto session = heapprof::Session::Start(iso->get(), options);
    if (!session.ok()) {
      std::fprintf(stderr, "heapprof_soak: window %ld did not start: %s\n", w, session.status().message().c_str());
      return 1;
    }
    if (auto r = iso->RunScript("tick(" + std::to_string(w) + ")", "driver.js"); !r.ok()) {
      std::fprintf(stderr, "heapprof_soak: window %ld: %s\n", w, r.status().message().c_str());
      return 1;
    }
    auto profile = std::move(session.value()).StopAndBuild();
    if (!profile.ok()) {
      std::fprintf(stderr, "heapprof_soak: window %ld did not stop: %s\n", w, profile.status().message().c_str());
      return 1;
    }
    auto encoded = heapprof::EncodePprofGzip(profile.value());
    if (!encoded.ok() || !heapprof::DecodePprof(encoded.value()).ok()) {
      std::fprintf(stderr, "heapprof_soak: window %ld gave an invalid profile\n", w);
      return 1;
    }
    samples = profile->samples.size();
    if (w != warmup && !IsReportPoint(w, windows)) continue;
    Memory m = Measure(iso->get());
    if (w == warmup) warm = m;
    if (IsReportPoint(w, windows)) {
      last = m;
      std::printf("%10ld %12ld %12ld %12ld %12zu %10llu\n", w, m.rss_kib, m.raw_rss_kib, m.malloc_kib, m.v8_heap_kib,
                  static_cast<unsigned long long>(samples));
      std::fflush(stdout);
    }
  }
  if (samples == 0) {
    std::fprintf(stderr, "heapprof_soak: the last window has no samples; the workload did not run\n");
    return 1;
  }
  double rss_growth = Growth(warm.rss_kib, last.rss_kib);
  double malloc_growth = Growth(warm.malloc_kib, last.malloc_kib);
  std::printf(
      "After the warm-up (window %ld) to window %ld: RSS %ld -> %ld KiB (%+.2f %%), malloc in use %ld -> %ld "
      "KiB (%+.2f %%); limit %+.0f %%%s\n",
      warmup, windows, warm.rss_kib, last.rss_kib, 100 * rss_growth, warm.malloc_kib, last.malloc_kib,
      100 * malloc_growth, 100 * kMaxGrowth, kJudgeGrowth ? "" : " (not judged under AddressSanitizer)");
  if (kJudgeGrowth && (rss_growth > kMaxGrowth || malloc_growth > kMaxGrowth)) {
    std::fprintf(stderr, "heapprof_soak: memory grew after the warm-up (RSS %+.2f %%, malloc %+.2f %%)\n",
                 100 * rss_growth, 100 * malloc_growth);
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  long windows = kDefaultWindows;
  if (argc > 2 || (argc == 2 && (windows = std::strtol(argv[1], nullptr, 10)) < 10)) {
    std::fprintf(stderr, "usage: heapprof_soak [WINDOWS]   (WINDOWS >= 10, default %ld)\n", kDefaultWindows);
    return 2;
  }
  if (heapprof::Status s = heapprof::InitializeV8(); !s.ok()) {
    std::fprintf(stderr, "heapprof_soak: %s\n", s.message().c_str());
    return 1;
  }
  return Soak(windows);
}
