// zlib behind the worker runtime's CompressionStream and DecompressionStream:
// one z_stream per stream, kept across its chunks, so the prelude feeds input
// as it is written and takes output a bounded piece at a time as it is read.
#pragma once

#include <v8.h>

#include <memory>

namespace heapprof::internal {

// The live zlib streams of one worker. A stream is freed when the prelude
// closes it (end, error, cancel, abort), when V8 collects its handle, or with
// this registry when the worker goes (V8 runs no weak callback at disposal).
class ZlibStreams {
 public:
  ZlibStreams();
  ~ZlibStreams();
  ZlibStreams(const ZlibStreams&) = delete;
  ZlibStreams& operator=(const ZlibStreams&) = delete;

  struct Impl;
  Impl* impl() const { return impl_.get(); }

 private:
  std::unique_ptr<Impl> impl_;
};

// zlibOpen(mode, format) -> handle; mode "deflate" or "inflate", format
// "gzip", "deflate" (zlib wrapper) or "deflate-raw". `info.Data()` is the
// WorkerRuntime::State, whose ZlibStreams owns the stream.
void ZlibOpen(const v8::FunctionCallbackInfo<v8::Value>& info);
// zlibRun(handle, input, finish, output) -> [read, written, ended]: runs zlib
// over `input` (a Uint8Array) into `output` (a Uint8Array, at most its length
// is written). `finish`: no input follows (compression flushes its end;
// decompression must be at the end of its data). A TypeError, in workerd's
// words, for corrupt data, data that stops before its end, or bytes after it.
void ZlibRun(const v8::FunctionCallbackInfo<v8::Value>& info);
// zlibClose(handle): frees the z_stream now; the handle is unusable after.
void ZlibClose(const v8::FunctionCallbackInfo<v8::Value>& info);

}  // namespace heapprof::internal
