// zlib behind the worker runtime's CompressionStream and DecompressionStream:
// the prelude buffers a stream's chunks and calls these once at its end.
#pragma once

#include <v8.h>

namespace heapprof::internal {

// compress(format, bytes) -> Uint8Array; format is "gzip", "deflate" (zlib) or "deflate-raw".
void ZlibCompress(const v8::FunctionCallbackInfo<v8::Value>& info);
// decompress(format, bytes) -> Uint8Array; a TypeError for data that is not
// one complete stream of that format (corrupt, truncated or followed by more bytes).
void ZlibDecompress(const v8::FunctionCallbackInfo<v8::Value>& info);

}  // namespace heapprof::internal
