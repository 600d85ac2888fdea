// libFuzzer target: DecodeHeapProfile on arbitrary text never crashes, and
// what it accepts is a valid profile that exports again. Size properties
// (docs/security.md): its frames stay within the import cap and its totals
// add up without overflow.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "heapprof/core/folded.h"
#include "heapprof/core/heapprofile.h"
#include "heapprof/core/pprof.h"
#include "heapprof/core/report.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  heapprof::Result<heapprof::Profile> profile = heapprof::DecodeHeapProfile(text);
  if (!profile.ok()) return 0;
  if (!heapprof::ValidateProfile(*profile).ok()) std::abort();
  if (!heapprof::CheckValueTotals(*profile).ok()) std::abort();
  uint64_t frames = 0;
  for (const heapprof::Sample& s : profile->samples) frames += s.locations.size();
  if (frames > (uint64_t{1} << 24)) std::abort();  // heapprofile.cpp's kMaxImportedFrames
  for (size_t t = 0; t < profile->sample_types.size(); ++t)
    (void)heapprof::FunctionTotals(*profile, static_cast<int>(t));
  if (!heapprof::EncodeHeapProfile(*profile).ok()) std::abort();
  if (!heapprof::EncodeFolded(*profile).ok()) std::abort();
  if (!heapprof::EncodePprofGzip(*profile, 1).ok()) std::abort();
  return 0;
}
