// libFuzzer target: DecodePprof on arbitrary bytes never crashes, and what it
// accepts is a valid profile that encodes and decodes again.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include <google/protobuf/stubs/logging.h>

#include "heapprof/pprof.h"

// protobuf logs each non-UTF-8 string it rejects; fuzzing makes millions.
extern "C" int LLVMFuzzerInitialize(int*, char***) {
  google::protobuf::SetLogHandler(nullptr);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  heapprof::Result<heapprof::Profile> profile = heapprof::DecodePprof(bytes);
  if (!profile.ok()) return 0;
  if (!heapprof::ValidateProfile(*profile).ok()) std::abort();
  heapprof::Result<std::string> again = heapprof::EncodePprof(*profile);
  if (!again.ok() || !heapprof::DecodePprof(*again).ok()) std::abort();
  return 0;
}
