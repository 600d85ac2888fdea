// The symbolizer stage: rewrites a profile's script frames from generated
// (bundled, minified, compiled) positions to the original sources and names
// their source maps give. V8-free; never fails, never drops a frame.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "heapprof/core/profile.h"
#include "heapprof/core/source_map_locator.h"

namespace heapprof {

// What one Symbolize call did.
struct SymbolizeResult {
  size_t frames = 0;       // script frames seen (VM-state frames without a file are not counted)
  size_t mapped = 0;       // of those, rewritten to an original position (now or by an earlier run)
  size_t without_map = 0;  // their script has no usable map
  size_t outside_map = 0;  // their script has a map, but it has nothing for the position
  // Of outside_map: frames in code the map never described (a bundler's or
  // compiler's generated helpers, such as esbuild's __spreadValues or tsc's
  // __awaiter: unmapped lines the map reaches), counted in the profile's
  // comment without a warning. The rest, past the map's last line or with a
  // map older than its script, are warned of.
  size_t generated = 0;
  size_t scripts = 0;                 // distinct scripts among the frames
  size_t scripts_with_map = 0;        // of those, with a usable map
  std::vector<std::string> warnings;  // why maps were unusable or did not fit
};

// For each script frame, finds the original source, line, column and (where
// the map names it) the original function name of the function's generated
// start position. Original names go to Function.name and the generated name
// to Function.system_name; the filename becomes the original source. Frames
// without a map stay as they are. Adds a "source_maps: ..." comment saying
// how many frames were mapped, how many had no map and how many are
// generated helpers no map covers (with their names). Running it again
// leaves frames mapped by an earlier run as they are.
SymbolizeResult Symbolize(Profile& profile, SourceMapProvider& provider);

}  // namespace heapprof
