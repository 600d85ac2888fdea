// Checks the V8 integration tests share: what a profile names, whether it is
// a valid pprof file, whether the isolate's sampler is free again.
#pragma once

#include <v8-profiler.h>
#include <v8.h>

#include <algorithm>
#include <string>
#include <string_view>

#include <catch2/catch.hpp>

#include "heapprof/core/pprof.h"
#include "heapprof/core/profile.h"

namespace heapprof::testing_v8 {

inline bool HasFunction(const Profile& p, std::string_view fn) {
  return std::any_of(p.functions.begin(), p.functions.end(), [&](const Function& f) { return p.str(f.name) == fn; });
}

// Valid for pprof readers: the model's invariants hold and it survives a gzip round trip.
inline void RequireValidPprof(const Profile& p) {
  Status valid = ValidateProfile(p);
  INFO(valid.message());
  REQUIRE(valid.ok());
  Result<std::string> encoded = EncodePprofGzip(p);
  REQUIRE(encoded.ok());
  Result<Profile> decoded = DecodePprof(encoded.value());
  INFO(decoded.status().message());
  REQUIRE(decoded.ok());
  CHECK(decoded->samples.size() == p.samples.size());
}

// Nobody holds the isolate's sampling heap profiler.
inline bool SamplerFree(v8::Isolate* isolate) {
  if (!isolate->GetHeapProfiler()->StartSamplingHeapProfiler(1024, 16)) return false;
  isolate->GetHeapProfiler()->StopSamplingHeapProfiler();
  return true;
}

}  // namespace heapprof::testing_v8
