// zlib for the worker runtime's compression streams. Bad input throws a
// TypeError, as the Compression standard asks of a DecompressionStream.
#include "heapprof/v8/worker_compression.h"

#include <zlib.h>

#include <cstring>
#include <string>
#include <string_view>

#include "heapprof/v8/v8_util.h"
#include "heapprof/v8/worker_natives.h"

namespace heapprof::internal {
namespace {

void ThrowTypeError(v8::Isolate* isolate, const std::string& message) {
  isolate->ThrowException(v8::Exception::TypeError(NewString(isolate, message)));
}

// zlib's windowBits for a format: gzip wrapper, zlib wrapper, or none; 0 if unknown.
int WindowBits(const std::string& format) {
  if (format == "gzip") return 15 + 16;
  if (format == "deflate") return 15;
  if (format == "deflate-raw") return -15;
  return 0;
}

v8::Local<v8::Uint8Array> NewBytes(v8::Isolate* isolate, const std::string& bytes) {
  v8::Local<v8::ArrayBuffer> buffer = v8::ArrayBuffer::New(isolate, bytes.size());
  if (!bytes.empty()) std::memcpy(buffer->GetBackingStore()->Data(), bytes.data(), bytes.size());
  return v8::Uint8Array::New(buffer, 0, bytes.size());
}

// The format and input bytes of a (format, bytes) call, or false after throwing.
bool Arguments(const v8::FunctionCallbackInfo<v8::Value>& info, int* window_bits, std::string* input) {
  v8::Isolate* isolate = info.GetIsolate();
  std::string format = ValueToString(isolate, isolate->GetCurrentContext(), info[0]);
  *window_bits = WindowBits(format);
  if (*window_bits == 0) {
    ThrowTypeError(isolate, "unsupported compression format: " + format);
    return false;
  }
  std::string_view bytes;
  if (!ViewBytes(info[1], &bytes)) {
    ThrowTypeError(isolate, "expected an ArrayBuffer or an ArrayBufferView");
    return false;
  }
  input->assign(bytes);  // a copy: zlib runs without V8 moving anything under it
  return true;
}

}  // namespace

void ZlibCompress(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  int window_bits = 0;
  std::string input;
  if (!Arguments(info, &window_bits, &input)) return;
  z_stream z{};
  if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, window_bits, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    ThrowTypeError(isolate, "zlib could not start compressing");
    return;
  }
  std::string out(deflateBound(&z, static_cast<uLong>(input.size())), '\0');
  z.next_in = reinterpret_cast<Bytef*>(input.data());
  z.avail_in = static_cast<uInt>(input.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  int status = deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  if (status != Z_STREAM_END) {
    ThrowTypeError(isolate, "zlib could not compress the stream");
    return;
  }
  info.GetReturnValue().Set(NewBytes(isolate, out));
}

void ZlibDecompress(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  int window_bits = 0;
  std::string input;
  if (!Arguments(info, &window_bits, &input)) return;
  z_stream z{};
  if (inflateInit2(&z, window_bits) != Z_OK) {
    ThrowTypeError(isolate, "zlib could not start decompressing");
    return;
  }
  z.next_in = reinterpret_cast<Bytef*>(input.data());
  z.avail_in = static_cast<uInt>(input.size());
  std::string out;
  char chunk[64 * 1024];
  int status = Z_OK;
  while (status == Z_OK) {
    z.next_out = reinterpret_cast<Bytef*>(chunk);
    z.avail_out = sizeof chunk;
    status = inflate(&z, Z_NO_FLUSH);
    out.append(chunk, sizeof chunk - z.avail_out);
    if (status == Z_BUF_ERROR && z.avail_in == 0) break;  // all input read, the stream not finished
  }
  bool trailing = status == Z_STREAM_END && z.avail_in > 0;
  std::string reason = z.msg == nullptr ? "invalid data" : z.msg;
  inflateEnd(&z);
  if (status != Z_STREAM_END) {
    ThrowTypeError(isolate, status == Z_BUF_ERROR ? "the compressed data ends before its stream does"
                                                  : "the compressed data is corrupt (zlib: " + reason + ")");
    return;
  }
  if (trailing) {
    ThrowTypeError(isolate, "the compressed data goes on after the end of its stream");
    return;
  }
  info.GetReturnValue().Set(NewBytes(isolate, out));
}

}  // namespace heapprof::internal
