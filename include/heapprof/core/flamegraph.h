// Flamegraphs of a profile: a self-contained interactive HTML page (inline
// script and style, no network) and a static SVG for viewers without JS.
#pragma once

#include <string>

#include "heapprof/core/profile.h"
#include "heapprof/core/status.h"

namespace heapprof {

struct FlamegraphOptions {
  // Sample type shown first (name such as "alloc_space", or index); empty
  // means the profile's default sample type. The page can switch to any other.
  std::string sample_type;
  // Page or image title; empty means "heapprof flamegraph".
  std::string title;
};

// The interactive page with every sample type of `profile`. Fails on a
// profile without samples or an unknown `sample_type`.
Result<std::string> RenderFlamegraphHtml(const Profile& profile, const FlamegraphOptions& options = {});

struct FlamegraphSvgOptions {
  std::string sample_type;  // as in FlamegraphOptions
  std::string title;
  int width = 1200;  // image width in pixels (at least 200)
};

// A static flamegraph of one sample type: <title> tooltips, frames narrower
// than a pixel left out. Fails like RenderFlamegraphHtml.
Result<std::string> RenderFlamegraphSvg(const Profile& profile, const FlamegraphSvgOptions& options = {});

}  // namespace heapprof
