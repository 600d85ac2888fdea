// libFuzzer target: DecodePprof on arbitrary bytes never crashes, what it
// accepts is a valid profile that encodes and decodes again, and the same
// bytes gzipped decode to the same result (so protobuf mutations reach the
// parser through the gzip path too, not only as literal gzip inputs).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include <google/protobuf/stubs/logging.h>

#include "heapprof/gzip.h"
#include "heapprof/pprof.h"

namespace {

void Check(bool ok) {
  if (!ok) std::abort();
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
  heapprof::Result<std::string> encoded = profile.ok() ? heapprof::EncodePprof(*profile)
                                                       : heapprof::Result<std::string>(profile.status());
  if (profile.ok()) {
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
