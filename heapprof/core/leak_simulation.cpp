// Sampled objects are drawn by geometric gaps over each site's objects (one
// draw per sample, not per object); an object's death follows from its
// site's lifetime rule, exactly for FIFO and by memorylessness for random
// eviction.
#include "heapprof/core/leak_simulation.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "heapprof/core/stack_table.h"

namespace heapprof {
namespace {

struct SimObject {
  double birth = 0;  // seconds
  double death = std::numeric_limits<double>::infinity();
  uint32_t site = 0;
  uint64_t id = 0;
};

// Objects of the site allocated by time t.
double AllocatedBy(const SimSite& site, double t) {
  double n = std::floor(site.objects_per_second * t + 1e-9);
  if (site.lifetime == SimLifetime::kFill) n = std::min(n, static_cast<double>(site.capacity));
  return n;
}

double LiveAt(const SimSite& site, double t) {
  const double n = AllocatedBy(site, t);
  if (site.lifetime == SimLifetime::kLeak || site.lifetime == SimLifetime::kFill) return n;
  return std::min(n, static_cast<double>(site.capacity));
}

}  // namespace

SimSession SimulateLeakSession(const std::vector<SimSite>& sites, const SimSessionOptions& options, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const double interval = static_cast<double>(std::max<uint64_t>(options.interval_bytes, 1));

  internal::StackTable table;
  const StackId main_stack = table.InternStack(StackId{0}, table.InternFrame({"main", "file:///sim.js", 1, 1, 1}));
  const StackId handler = table.InternStack(main_stack, table.InternFrame({"handle", "file:///sim.js", 1, 5, 1}));
  std::vector<StackId> stacks;
  for (size_t s = 0; s < sites.size(); ++s) {
    stacks.push_back(table.InternStack(
        handler, table.InternFrame({sites[s].function, "file:///sim.js", 2, 10 * static_cast<int>(s + 1), 3})));
  }

  std::vector<SimObject> objects;
  for (size_t s = 0; s < sites.size(); ++s) {
    const SimSite& site = sites[s];
    if (site.objects_per_second <= 0) continue;
    const double total = AllocatedBy(site, options.warmup + options.seconds);
    const double p = -std::expm1(-static_cast<double>(std::max<uint64_t>(site.object_size, 1)) / interval);
    const double log_miss = std::log1p(-p);
    double index = -1;
    while (true) {
      // Objects skipped before the next sampled one: geometric with success p.
      double skip = p >= 1 - 1e-12 ? 0 : std::floor(std::log(1 - unit(rng)) / log_miss);
      index += skip + 1;
      if (index >= total) break;
      SimObject o;
      o.site = static_cast<uint32_t>(s);
      o.birth = (index + 1) / site.objects_per_second;  // object i is allocated when the count reaches i + 1
      const double c = static_cast<double>(site.capacity);
      if (site.lifetime == SimLifetime::kRing) {
        o.death = (index + c + 1) / site.objects_per_second;
      } else if (site.lifetime == SimLifetime::kLru && site.capacity > 0) {
        // Inserts after it (or after the cache is full), each evicting it with chance 1/c.
        const double first_evicting = std::max(index + 1, c);  // 0-based index of the first insert that may evict it
        double survived = c <= 1 ? 0 : std::floor(std::log(1 - unit(rng)) / std::log1p(-1.0 / c));
        o.death = (first_evicting + survived + 1) / site.objects_per_second;
      }
      objects.push_back(o);
    }
  }
  std::sort(objects.begin(), objects.end(), [](const SimObject& x, const SimObject& y) { return x.birth < y.birth; });
  for (size_t i = 0; i < objects.size(); ++i) objects[i].id = i + 1;

  SimSession out;
  const std::vector<Frame> frames = table.frames();
  const std::vector<StackNode> stack_nodes = table.stacks();
  const int count = static_cast<int>(std::floor(options.seconds / options.cadence + 1e-9)) + 1;
  for (int k = 0; k < count; ++k) {
    const double t = options.warmup + k * options.cadence;
    RawSnapshot snap;
    snap.frames = frames;
    snap.stacks = stack_nodes;
    snap.info.interval_bytes = options.interval_bytes;
    snap.info.strategy = "simulation";
    snap.info.start_unix_nanos =
        options.start_unix_nanos + static_cast<int64_t>(std::llround(k * options.cadence * 1e9));
    snap.info.heap_limit_bytes = options.heap_limit_bytes;
    std::vector<double> truth(sites.size(), 0.0);
    double used = static_cast<double>(options.base_heap_bytes);
    for (size_t s = 0; s < sites.size(); ++s) {
      truth[s] = LiveAt(sites[s], t) * static_cast<double>(sites[s].object_size);
      used += truth[s];
    }
    snap.info.heap_used_bytes = static_cast<uint64_t>(used);
    for (const SimObject& o : objects) {
      if (o.birth > t) break;
      if (o.death <= t) continue;
      RawSample sample;
      sample.sample_id = o.id;
      sample.stack = stacks[o.site];
      sample.size = sites[o.site].object_size;
      sample.live = true;
      snap.samples.push_back(sample);
    }
    out.snapshots.push_back(std::move(snap));
    out.requests.push_back(static_cast<uint64_t>(std::floor(options.requests_per_second * t + 1e-9)));
    out.true_live.push_back(std::move(truth));
  }
  return out;
}

}  // namespace heapprof
