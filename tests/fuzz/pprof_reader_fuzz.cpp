// libFuzzer target: DecodePprof on arbitrary bytes never crashes, what it
// accepts is a valid profile that encodes and decodes again, and the same
// bytes gzipped decode to the same result (so protobuf mutations reach the
// parser through the gzip path too, not only as literal gzip inputs).
// Size properties (docs/security.md): an accepted profile of N input bytes
// (N inflated bytes, at most InflateLimit of the gzipped size) holds at most
// N samples, frames, locations, functions and strings together, within the
// reader's caps, and its totals add up without overflow.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include <google/protobuf/stubs/logging.h>

#include "heapprof/core/gzip.h"
#include "heapprof/core/pprof.h"
#include "heapprof/core/report.h"

namespace {

void Check(bool ok) {
  if (!ok) std::abort();
}

// Every element of the model costs at least one byte of serialized input.
void CheckSize(const heapprof::Profile& p, size_t serialized_bytes) {
  uint64_t frames = 0;
  for (const heapprof::Sample& s : p.samples) {
    Check(s.locations.size() <= heapprof::kMaxPprofStackDepth);
    frames += s.locations.size();
  }
  Check(p.samples.size() <= heapprof::kMaxPprofSamples);
  Check(frames <= heapprof::kMaxPprofFrames);
  Check(p.samples.size() + frames + p.locations.size() + p.functions.size() + p.strings.size() <=
        serialized_bytes + 1);  // +1: an empty string table gets its ""
  Check(heapprof::CheckValueTotals(p).ok());
  // Sums over every sample, as `top` makes them (UBSan flags an overflow).
  for (size_t t = 0; t < p.sample_types.size(); ++t) (void)heapprof::FunctionTotals(p, static_cast<int>(t));
}

}  // namespace

// protobuf logs each non-UTF-8 string it rejects; fuzzing makes millions.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  heapprof::Result<heapprof::Profile> profile = heapprof::DecodePprof(bytes);
  heapprof::Result<std::string> encoded =
      profile.ok() ? heapprof::EncodePprof(*profile) : heapprof::Result<std::string>(profile.status());
  if (profile.ok()) {
    size_t serialized = size;
    if (heapprof::IsGzip(bytes)) {
      heapprof::Result<std::string> raw = heapprof::GzipDecompress(bytes);
      Check(raw.ok() && raw->size() <= heapprof::InflateLimit(size));
      serialized = raw->size();
    }
    CheckSize(*profile, serialized);
    Check(heapprof::ValidateProfile(*profile).ok());
    Check(encoded.ok());
    heapprof::Result<heapprof::Profile> again = heapprof::DecodePprof(*encoded);
    Check(again.ok());
    heapprof::Result<std::string> reencoded = heapprof::EncodePprof(*again);
    Check(reencoded.ok() && *reencoded == *encoded);
  }
  if (heapprof::IsGzip(bytes)) return 0;
  heapprof::Result<std::string> gzipped = heapprof::GzipCompress(bytes, 1);
  Check(gzipped.ok());
  heapprof::Result<heapprof::Profile> unzipped = heapprof::DecodePprof(*gzipped);
  Check(unzipped.ok() == profile.ok());
  if (unzipped.ok()) {
    heapprof::Result<std::string> unzipped_encoded = heapprof::EncodePprof(*unzipped);
    Check(unzipped_encoded.ok() && *unzipped_encoded == *encoded);
  }
  return 0;
}
