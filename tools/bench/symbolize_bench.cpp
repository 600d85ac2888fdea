// Source map cost: symbolizing a profile of 10k locations against a ~5 MB map
// (a synthetic minified bundle: long lines, many sources, embedded
// sourcesContent). Prints the map parse time, the lookup time and the whole
// Symbolize call (CPU time, best of 5), with plain JSON parsing of the same
// map by nlohmann as the baseline.
//
//   symbolize_bench [locations=10000] [target_map_mib=5] [--json FILE]
#include <fmt/format.h>

#include <unistd.h>
#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <vector>

#include "heapprof/core/profile_builder.h"
#include "heapprof/core/source_map.h"
#include "heapprof/core/stack_table.h"
#include "heapprof/core/symbolizer.h"

namespace {

namespace fs = std::filesystem;

void AppendVlq(std::string& out, int64_t value) {
  static constexpr char kBase64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  uint64_t v = value < 0 ? (static_cast<uint64_t>(-value) << 1) | 1 : static_cast<uint64_t>(value) << 1;
  do {
    uint64_t digit = v & 31;
    v >>= 5;
    if (v) digit |= 32;
    out.push_back(kBase64[digit]);
  } while (v);
}

struct Bundle {
  std::string map_json;
  // Generated (1-based line, column) of each function's '(' and its generated name.
  std::vector<heapprof::Frame> functions;
};

// A minified bundle's map: `lines` long generated lines, each a run of
// functions "function NAME(a){...}" whose name tokens carry original names.
Bundle MakeBundle(size_t target_bytes, const std::string& script) {
  std::mt19937 rng(42);
  const int kSources = 400;
  const int kNames = 30000;
  Bundle b;
  nlohmann::json j;
  j["version"] = 3;
  j["file"] = "bundle.js";
  std::vector<std::string> sources, contents, names;
  for (int i = 0; i < kSources; ++i) sources.push_back(fmt::format("../src/module_{}.ts", i));
  for (int i = 0; i < kNames; ++i) names.push_back(fmt::format("originalFunctionName{}", i));
  // Roughly 40 % of a real bundler's map is sourcesContent.
  std::string filler(static_cast<size_t>(target_bytes * 0.4 / kSources), 'x');
  for (int i = 0; i < kSources; ++i) contents.push_back(fmt::format("// module {}\n{}", i, filler));

  std::string mappings;
  int64_t prev_source = 0, prev_line = 0, prev_col = 0, prev_name = 0;
  std::vector<int64_t> src_line(kSources, 0);
  const size_t mapping_budget = static_cast<size_t>(target_bytes * 0.6);
  for (int64_t line = 0; mappings.size() < mapping_budget; ++line) {
    if (line > 0) mappings.push_back(';');
    int64_t gen_col = 0, last_col = 0;
    bool first = true;
    auto segment = [&](int64_t col, int64_t source, int64_t oline, int64_t ocol, int64_t name) {
      if (!first) mappings.push_back(',');
      first = false;
      AppendVlq(mappings, col - last_col);
      last_col = col;
      AppendVlq(mappings, source - prev_source);
      AppendVlq(mappings, oline - prev_line);
      AppendVlq(mappings, ocol - prev_col);
      prev_source = source, prev_line = oline, prev_col = ocol;
      if (name >= 0) {
        AppendVlq(mappings, name - prev_name);
        prev_name = name;
      }
    };
    for (int fn = 0; fn < 400; ++fn) {
      int64_t source = rng() % kSources;
      int64_t oline = (src_line[source] += 1 + rng() % 20);
      int64_t name = rng() % kNames;
      std::string gen_name = fmt::format("{}{}", static_cast<char>('a' + rng() % 26), fn % 10);
      segment(gen_col, source, oline, 0, -1);        // "function"
      segment(gen_col + 9, source, oline, 9, name);  // name token
      int64_t paren = gen_col + 9 + static_cast<int64_t>(gen_name.size());
      segment(paren, source, oline, 9 + static_cast<int64_t>(names[name].size()), -1);  // '('
      b.functions.push_back(
          heapprof::Frame{gen_name, script, 1, static_cast<int>(line + 1), static_cast<int>(paren + 1)});
      // The body: a handful of statements.
      int64_t col = paren + 4;
      for (int s = 0; s < 6; ++s) {
        segment(col, source, oline + 1 + s, 4, (s % 3 == 0) ? static_cast<int64_t>(rng() % kNames) : -1);
        col += 6 + rng() % 20;
      }
      gen_col = col + 1;
    }
  }
  j["sources"] = sources;
  j["sourcesContent"] = contents;
  j["names"] = names;
  j["mappings"] = std::move(mappings);
  b.map_json = j.dump();
  return b;
}

// Hands out one already-parsed map, to time lookups alone.
class ParsedProvider final : public heapprof::SourceMapProvider {
 public:
  explicit ParsedProvider(const heapprof::SourceMap* map) : map_(map) {}
  heapprof::Result<const heapprof::SourceMap*> MapFor(std::string_view) override { return map_; }

 private:
  const heapprof::SourceMap* map_;
};

// This process's CPU time in ms: on a machine shared with other work, wall
// time measures the neighbours as much as the code.
double CpuMs() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
}

// Best of `runs`, in CPU ms.
template <typename F>
double BestOf(int runs, F&& f) {
  double best = 1e300;
  for (int i = 0; i < runs; ++i) {
    double t0 = CpuMs();
    f();
    best = std::min(best, CpuMs() - t0);
  }
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> positional;
  std::string json_path;
  for (int i = 1; i < argc; ++i) {
    if (std::string_view(argv[i]) == "--json" && i + 1 < argc)
      json_path = argv[++i];
    else
      positional.emplace_back(argv[i]);
  }
  size_t locations = positional.size() > 0 ? std::strtoul(positional[0].c_str(), nullptr, 10) : 10000;
  double target_mib = positional.size() > 1 ? std::strtod(positional[1].c_str(), nullptr) : 5.0;
  fs::path dir = fs::temp_directory_path() / fmt::format("heapprof_symbolize_bench_{}", ::getpid());
  fs::create_directories(dir);
  const std::string script = (dir / "bundle.js").string();

  Bundle bundle = MakeBundle(static_cast<size_t>(target_mib * 1024 * 1024), script);
  std::ofstream(script) << "/* generated */\n//# sourceMappingURL=bundle.js.map\n";
  std::ofstream(dir / "bundle.js.map") << bundle.map_json;

  // A profile whose locations are distinct functions of the bundle, each sampled once.
  std::mt19937 rng(7);
  std::shuffle(bundle.functions.begin(), bundle.functions.end(), rng);
  if (bundle.functions.size() < locations) locations = bundle.functions.size();
  heapprof::internal::StackTable table;
  heapprof::RawSnapshot snap;
  for (size_t i = 0; i < locations; ++i) {
    heapprof::StackId s = table.InternStack(heapprof::StackId{0}, table.InternFrame(bundle.functions[i]));
    snap.samples.push_back({i + 1, s, 64, true});
  }
  snap.frames = table.TakeFrames();
  snap.stacks = table.TakeStacks();
  const heapprof::Profile profile = heapprof::BuildProfile(snap);

  const int kRuns = 5;
  // Times Symbolize alone: the profile copy it rewrites and the provider are
  // made before the clock starts and destroyed after it stops.
  auto time_symbolize = [&](auto make_provider, heapprof::SymbolizeResult& out) {
    double best = 1e300;
    for (int i = 0; i < kRuns; ++i) {
      heapprof::Profile p = profile;
      auto provider = make_provider();
      double t0 = CpuMs();
      out = heapprof::Symbolize(p, *provider);
      best = std::min(best, CpuMs() - t0);
    }
    return best;
  };

  size_t json_keys = 0;
  double json_ms = BestOf(kRuns, [&] { json_keys = nlohmann::json::parse(bundle.map_json).size(); });
  size_t segments = 0;
  double parse_ms = BestOf(kRuns, [&] {
    auto m = heapprof::SourceMap::Parse(bundle.map_json, (dir / "bundle.js.map").string());
    if (!m.ok()) {
      fmt::print(stderr, "parse failed: {}\n", m.status().message());
      std::exit(1);
    }
    segments = m->mapping_count();
  });
  auto parsed = heapprof::SourceMap::Parse(bundle.map_json, (dir / "bundle.js.map").string());
  size_t hits = 0;
  double raw_lookup_ms = BestOf(kRuns, [&] {
    for (size_t i = 0; i < locations; ++i) {
      const heapprof::Frame& f = bundle.functions[i];
      hits += parsed->Lookup(f.line, f.column).has_value() + parsed->MappingBefore(f.line, f.column).has_value();
    }
  });
  heapprof::SymbolizeResult nomap, lookup, total;
  double nomap_ms = time_symbolize([] { return std::make_unique<ParsedProvider>(nullptr); }, nomap);
  double lookup_ms = time_symbolize([&] { return std::make_unique<ParsedProvider>(&parsed.value()); }, lookup);
  size_t parses = 0;
  double total_ms = 1e300;
  for (int i = 0; i < kRuns; ++i) {
    heapprof::Profile p = profile;
    // Finds, reads and parses the map inside Symbolize; the bench's folder is
    // the one tree it may read from (as a worker's folder is for heapprof run).
    heapprof::SourceMapSearch search;
    search.roots = {dir.string()};
    heapprof::FileSourceMapProvider provider(search);
    double t0 = CpuMs();
    total = heapprof::Symbolize(p, provider);
    total_ms = std::min(total_ms, CpuMs() - t0);
    parses = provider.maps_parsed();
  }
  fs::remove_all(dir);
  if (total.mapped != locations || lookup.mapped != locations) {
    fmt::print(stderr, "only {} of {} frames mapped\n", total.mapped, locations);
    return 1;
  }

  fmt::print("symbolize_bench: {} locations, map {:.2f} MiB ({} segments, {} generated lines); CPU ms, best of {}\n",
             locations, bundle.map_json.size() / (1024.0 * 1024.0), segments, parsed->generated_lines(), kRuns);
  fmt::print("  baseline: JSON parse only (nlohmann)   {:8.2f} ms\n", json_ms);
  fmt::print("  map parse (JSON + VLQ decode)          {:8.2f} ms  ({:.2f}x the baseline)\n", parse_ms,
             parse_ms / json_ms);
  fmt::print(
      "  symbolize, map already parsed          {:8.2f} ms  ({:.0f} ns per location; {:.2f} ms of it in\n"
      "                                                      Lookup+MappingBefore, {:.2f} ms with no map at all)\n",
      lookup_ms, lookup_ms * 1e6 / static_cast<double>(locations), raw_lookup_ms, nomap_ms);
  fmt::print("  symbolize from disk (find+read+parse)  {:8.2f} ms  ({:.2f}x the baseline; map parsed {}x)\n", total_ms,
             total_ms / json_ms, parses);
  fmt::print("  target: whole symbolize under 100 ms -> {}\n", total_ms < 100 ? "met" : "NOT met");
  if (!json_path.empty()) {
    nlohmann::json out = {{"locations", locations},           {"map_bytes", bundle.map_json.size()},
                          {"json_parse_ms", json_ms},         {"map_parse_ms", parse_ms},
                          {"symbolize_parsed_ms", lookup_ms}, {"symbolize_total_ms", total_ms}};
    std::ofstream(json_path) << out.dump(2) << "\n";
  }
  return 0;
}
