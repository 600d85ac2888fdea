// libFuzzer target: DecodeHeapProfile on arbitrary text never crashes, and
// what it accepts is a valid profile that exports again.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "heapprof/folded.h"
#include "heapprof/heapprofile.h"
#include "heapprof/pprof.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  heapprof::Result<heapprof::Profile> profile = heapprof::DecodeHeapProfile(text);
  if (!profile.ok()) return 0;
  if (!heapprof::ValidateProfile(*profile).ok()) std::abort();
  if (!heapprof::EncodeHeapProfile(*profile).ok()) std::abort();
  if (!heapprof::EncodeFolded(*profile).ok()) std::abort();
  if (!heapprof::EncodePprofGzip(*profile, 1).ok()) std::abort();
  return 0;
}
