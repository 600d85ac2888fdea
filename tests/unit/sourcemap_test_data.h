// Access to the source map test data that tests/data/sourcemap/generate.mjs
// builds with tsc and esbuild (a CTest fixture), for the source map tests.
#pragma once

#include "heapprof/core/source_map_locator.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "heapprof/core/raw_snapshot.h"
#include "heapprof/core/stack_table.h"
#include "unit/test_dirs.h"

namespace heapprof::testing {

// Where the fixture writes: BUILD/sourcemap/{tsc,esbuild,esbuild-inline}.
inline std::filesystem::path GeneratedDir() { return BinaryDir() / "sourcemap"; }
// A search that may read scripts and maps in one folder's tree, as `heapprof run` allows the worker's folder.
inline heapprof::SourceMapSearch TreeOf(const std::filesystem::path& dir) {
  heapprof::SourceMapSearch search;
  search.roots = {dir.string()};
  return search;
}
// The TypeScript sources the builds come from.
inline std::filesystem::path TsSourceDir() { return SourceDir() / "tests" / "data" / "sourcemap" / "src"; }

inline std::string ReadText(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline void WriteText(const std::filesystem::path& p, const std::string& text) {
  std::filesystem::create_directories(p.parent_path());
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << text;
}

// 1-based number of the first line of `file` containing `needle`, 0 if none:
// expected positions come from the sources, not from the maps.
inline int64_t LineOf(const std::filesystem::path& file, const std::string& needle) {
  std::istringstream in(ReadText(file));
  std::string line;
  for (int64_t n = 1; std::getline(in, line); ++n) {
    if (line.find(needle) != std::string::npos) return n;
  }
  return 0;
}

// The functions V8 (Node's) reported for one build: name, script URL, and the
// 1-based line and column of the function's start position.
inline std::vector<Frame> RecordedFrames(const std::string& build) {
  std::vector<Frame> frames;
  std::istringstream in(ReadText(GeneratedDir() / ("frames-" + build + ".tsv")));
  std::string row;
  while (std::getline(in, row)) {
    std::vector<std::string> cols;
    std::istringstream fields(row);
    for (std::string c; std::getline(fields, c, '\t');) cols.push_back(c);
    if (cols.size() != 4) continue;
    frames.push_back(Frame{cols[0], cols[1], 1, std::stoi(cols[2]), std::stoi(cols[3])});
  }
  return frames;
}

// A snapshot in which each frame allocated on its own, stack [frame].
inline RawSnapshot SnapshotOf(const std::vector<Frame>& frames) {
  internal::StackTable table;
  RawSnapshot snap;
  uint64_t id = 1;
  for (const Frame& f : frames) {
    StackId s = table.InternStack(StackId{0}, table.InternFrame(f));
    snap.samples.push_back({id++, s, 128, true});
  }
  snap.frames = table.TakeFrames();
  snap.stacks = table.TakeStacks();
  return snap;
}

}  // namespace heapprof::testing
