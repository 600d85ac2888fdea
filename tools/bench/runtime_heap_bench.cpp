// What the worker runtime itself keeps on the V8 heap, taken apart (the
// numbers behind memory_baseline.mjs's comparison with workerd): V8's own
// isolate with an empty context (the floor, same process), then the runtime
// with tools/bench/empty-worker.js's worker after N requests, each after a
// full GC: used bytes per heap space, and a heap snapshot's self sizes
// grouped by node type and name (the largest groups, the closures beyond the floor's by name with
// --closures, the strings with --strings). V8 flags are those of `heapprof run` (WorkerRuntimeV8Flags:
// inlining off unless --inlining is given). The requests are one GET of https://example.com/, or
// `heapprof run`'s synthetic stream with --synthetic; --header adds a header to the one GET
// (repeatable; workerd's memory baseline gets Host and Connection from Node's client).
// --types adds V8's own count of every object by instance type at the last full GC
// (--track-gc-object-stats: objects a heap snapshot does not show included).
//   runtime_heap_bench [--requests N] [--top K] [--closures] [--strings] [--inlining] [--synthetic]
//                      [--types] [--header 'NAME: VALUE']... [--v8-flag FLAG]...
#include <v8-profiler.h>
#include <v8.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "heapprof/runtime/worker_runtime.h"
#include "heapprof/v8/v8_host.h"
#include "heapprof/workload/traffic.h"

using namespace heapprof;

namespace {

constexpr const char* kEmptyWorker = "export default { async fetch() { return new Response('ok'); } };\n";

void FullGc(v8::Isolate* isolate) { isolate->RequestGarbageCollectionForTesting(v8::Isolate::kFullGarbageCollection); }

size_t PrintSpaces(v8::Isolate* isolate, const char* what) {
  v8::HeapStatistics heap;
  isolate->GetHeapStatistics(&heap);
  std::printf("%s: %zu B used\n", what, heap.used_heap_size());
  for (size_t i = 0; i < isolate->NumberOfHeapSpaces(); ++i) {
    v8::HeapSpaceStatistics space;
    if (isolate->GetHeapSpaceStatistics(&space, i) && space.space_used_size() > 0) {
      std::printf("  %-24s %9zu B\n", space.space_name(), space.space_used_size());
    }
  }
  return heap.used_heap_size();
}

// v8::HeapGraphNode::Type's names, in its order (newer V8 appends kObjectShape).
const char* TypeName(v8::HeapGraphNode::Type type) {
  static const char* const kNames[] = {"hidden",      "array",         "string", "object", "code",
                                       "closure",     "regexp",        "number", "native", "synthetic",
                                       "cons string", "sliced string", "symbol", "bigint", "object shape"};
  const size_t i = static_cast<size_t>(type);
  return i < sizeof kNames / sizeof kNames[0] ? kNames[i] : "?";
}

// "edge name of node name" for the first node that holds `target` (a linear
// scan: called for the few nodes of 1 KiB or more).
std::string RetainerOf(const v8::HeapSnapshot* snapshot, const v8::HeapGraphNode* target, v8::Isolate* isolate) {
  for (int i = 0; i < snapshot->GetNodesCount(); ++i) {
    const v8::HeapGraphNode* node = snapshot->GetNode(i);
    for (int c = 0; c < node->GetChildrenCount(); ++c) {
      const v8::HeapGraphEdge* edge = node->GetChild(c);
      if (edge->GetToNode() != target) continue;
      v8::String::Utf8Value edge_name(isolate, edge->GetName());
      v8::String::Utf8Value node_name(isolate, node->GetName());
      return std::string(*edge_name ? *edge_name : "?") + " of " +
             std::string(*node_name ? *node_name : "?").substr(0, 40);
    }
  }
  return "no retainer";
}

struct Group {
  size_t count = 0;
  size_t bytes = 0;
};

void PrintGroups(const char* title, const std::map<std::string, Group>& groups, size_t top) {
  std::vector<std::pair<std::string, Group>> rows(groups.begin(), groups.end());
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second.bytes > b.second.bytes; });
  std::printf("%s\n", title);
  for (size_t i = 0; i < rows.size() && i < top; ++i) {
    std::printf("  %8zu B %6zu  %s\n", rows[i].second.bytes, rows[i].second.count, rows[i].first.c_str());
  }
}

struct Groups {
  size_t total = 0;
  std::map<std::string, Group> by_type, by_name, by_closure, by_string;
  std::vector<std::pair<size_t, std::string>> large;  // single nodes of 1 KiB or more
};

// Self sizes of a heap snapshot, by type, by (type, name) and closures by name.
Groups TakeGroups(v8::Isolate* isolate) {
  v8::HandleScope scope(isolate);
  const v8::HeapSnapshot* snapshot = isolate->GetHeapProfiler()->TakeHeapSnapshot();
  Groups out;
  for (int i = 0; i < snapshot->GetNodesCount(); ++i) {
    const v8::HeapGraphNode* node = snapshot->GetNode(i);
    const size_t size = node->GetShallowSize();
    if (size == 0) continue;
    v8::String::Utf8Value name(isolate, node->GetName());
    std::string text = *name ? std::string(*name).substr(0, 80) : "?";
    const std::string type = TypeName(node->GetType());
    out.total += size;
    if (size >= 1024)
      out.large.emplace_back(size, type + " / " + text + " (" + RetainerOf(snapshot, node, isolate) + ")");
    Group& t = out.by_type[type];
    t.count++, t.bytes += size;
    // Strings, closures and numbers are grouped by type only (their names are their values).
    const bool named =
        node->GetType() != v8::HeapGraphNode::kString && node->GetType() != v8::HeapGraphNode::kClosure &&
        node->GetType() != v8::HeapGraphNode::kHeapNumber && node->GetType() != v8::HeapGraphNode::kConsString &&
        node->GetType() != v8::HeapGraphNode::kSlicedString;
    Group& n = out.by_name[type + " / " + (named ? text : "*")];
    n.count++, n.bytes += size;
    if (node->GetType() == v8::HeapGraphNode::kString) {
      Group& g = out.by_string["\"" + text + "\""];
      g.count++, g.bytes += size;
    }
    if (node->GetType() == v8::HeapGraphNode::kClosure) {
      Group& c = out.by_closure[text.empty() ? "(anonymous)" : text];
      c.count++, c.bytes += size;
    }
  }
  const_cast<v8::HeapSnapshot*>(snapshot)->Delete();
  return out;
}

// What `groups` has beyond `floor` (groups that shrank are left out).
std::map<std::string, Group> Minus(const std::map<std::string, Group>& groups,
                                   const std::map<std::string, Group>& floor) {
  std::map<std::string, Group> out;
  for (const auto& [key, group] : groups) {
    auto it = floor.find(key);
    const Group base = it == floor.end() ? Group{} : it->second;
    if (group.bytes > base.bytes)
      out[key] = {group.count - std::min(group.count, base.count), group.bytes - base.bytes};
  }
  return out;
}

// V8's object statistics of the last full GC, by instance type (bytes, count).
std::map<std::string, Group> ObjectTypes(v8::Isolate* isolate) {
  std::map<std::string, Group> out;
  for (size_t i = 0; i < isolate->NumberOfTrackedHeapObjectTypes(); ++i) {
    v8::HeapObjectStatistics stats;
    if (!isolate->GetHeapObjectStatisticsAtLastGC(&stats, i) || stats.object_size() == 0) continue;
    std::string name = stats.object_type();
    if (*stats.object_sub_type() != '\0') name += std::string(" / ") + stats.object_sub_type();
    Group& g = out[name];
    g.count += stats.object_count(), g.bytes += stats.object_size();
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  size_t requests = 1000, top = 40;
  bool closures = false, strings = false, inlining = false, synthetic = false, types = false;
  std::vector<std::string> extra;
  std::vector<std::pair<std::string, std::string>> fixed_headers;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--requests" && i + 1 < argc) {
      requests = std::strtoul(argv[++i], nullptr, 10);
    } else if (arg == "--top" && i + 1 < argc) {
      top = std::strtoul(argv[++i], nullptr, 10);
    } else if (arg == "--closures") {
      closures = true;
    } else if (arg == "--strings") {
      strings = true;
    } else if (arg == "--inlining") {
      inlining = true;
    } else if (arg == "--synthetic") {
      synthetic = true;
    } else if (arg == "--types") {
      types = true;
    } else if (arg == "--header" && i + 1 < argc) {
      const std::string header = argv[++i];
      const size_t colon = header.find(':');
      if (colon == std::string::npos) {
        std::fprintf(stderr, "runtime_heap_bench: --header takes \"Name: value\"\n");
        return 2;
      }
      const size_t value = header.find_first_not_of(' ', colon + 1);
      fixed_headers.emplace_back(header.substr(0, colon), value == std::string::npos ? "" : header.substr(value));
    } else if (arg == "--v8-flag" && i + 1 < argc) {
      extra.push_back(argv[++i]);
    } else {
      std::fprintf(stderr,
                   "usage: runtime_heap_bench [--requests N] [--top K] [--closures] [--strings] [--inlining] "
                   "[--synthetic] [--types] [--header 'NAME: VALUE']... [--v8-flag FLAG]...\n");
      return 2;
    }
  }
  V8InitOptions init;
  init.flags = WorkerRuntimeV8Flags(inlining);
  if (types) init.flags.push_back("--track-gc-object-stats");
  init.flags.insert(init.flags.end(), extra.begin(), extra.end());
  if (Status s = InitializeV8(init); !s.ok()) {
    std::fprintf(stderr, "runtime_heap_bench: %s\n", s.message().c_str());
    return 1;
  }
  // The given flags this V8 does not know (heapprof's own include newer V8's, e.g. Maglev's).
  for (const std::string& flag : V8UnknownFlags()) {
    if (std::find(extra.begin(), extra.end(), flag) != extra.end())
      std::fprintf(stderr, "runtime_heap_bench: unknown flag %s\n", flag.c_str());
  }

  size_t floor = 0;
  Groups floor_groups;
  std::map<std::string, Group> floor_types;
  {
    Result<Isolate> bare = Isolate::Create();
    if (!bare.ok()) {
      std::fprintf(stderr, "runtime_heap_bench: %s\n", bare.status().message().c_str());
      return 1;
    }
    v8::Isolate::Scope scope(bare->get());
    FullGc(bare->get());
    floor = PrintSpaces(bare->get(), "V8's isolate with an empty context, after a full GC");
    floor_groups = TakeGroups(bare->get());
    if (types) floor_types = ObjectTypes(bare->get());
  }

  WorkerOptions options;
  options.console = [](std::string_view, std::string_view) {};
  Result<WorkerRuntime> runtime = WorkerRuntime::Create(options);
  Status loaded = runtime.ok() ? runtime->Load(kEmptyWorker, "empty-worker.js") : runtime.status();
  if (!loaded.ok()) {
    std::fprintf(stderr, "runtime_heap_bench: %s\n", loaded.message().c_str());
    return 1;
  }
  WorkerRequest fixed;
  fixed.url = "https://example.com/";
  fixed.headers = fixed_headers;
  for (size_t i = 0; i < requests; ++i) {
    DispatchResult response = runtime->Dispatch(synthetic ? SyntheticRequest(i) : fixed);
    if (!response.ok()) {
      std::fprintf(stderr, "runtime_heap_bench: request %zu: %s\n", i, response.status().message().c_str());
      return 1;
    }
  }
  v8::Isolate* isolate = runtime->isolate().get();
  v8::Isolate::Scope scope(isolate);
  FullGc(isolate);
  char what[128];
  std::snprintf(what, sizeof what, "the runtime with an empty worker after %zu requests, after a full GC", requests);
  const size_t used = PrintSpaces(isolate, what);
  std::printf("the runtime adds %zd B to V8's floor\n", static_cast<ssize_t>(used) - static_cast<ssize_t>(floor));
  // Before the snapshot, whose own collection would replace the statistics.
  const std::map<std::string, Group> runtime_types = types ? ObjectTypes(isolate) : std::map<std::string, Group>{};
  const Groups groups = TakeGroups(isolate);
  std::printf("heap snapshot (self sizes): %zu B, V8's empty context's %zu B\n", groups.total, floor_groups.total);
  PrintGroups("what the runtime adds, by type:", Minus(groups.by_type, floor_groups.by_type), top);
  PrintGroups("what the runtime adds, by type / name:", Minus(groups.by_name, floor_groups.by_name), top);
  std::printf("single objects of 1 KiB or more (V8's empty context has %zu):\n", floor_groups.large.size());
  for (const auto& [size, node] : groups.large) std::printf("  %8zu B  %s\n", size, node.c_str());
  if (types)
    PrintGroups("V8's object statistics beyond the floor's, by instance type:", Minus(runtime_types, floor_types), top);
  if (strings)
    PrintGroups("strings beyond the floor's, by value:", Minus(groups.by_string, floor_groups.by_string), top);
  if (closures) {
    const auto added = Minus(groups.by_closure, floor_groups.by_closure);
    PrintGroups("closures beyond the floor's, by name:", added, added.size());
  }
  return 0;
}
