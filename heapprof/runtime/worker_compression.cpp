// zlib for the worker runtime's compression streams, one z_stream per stream
// fed chunk by chunk: a gzip bomb read piece by piece never exists whole in
// memory. Bad input throws a TypeError, as the Compression standard asks of a
// DecompressionStream, in workerd's words (workers echo err.message).
#include "heapprof/runtime/worker_compression.h"

#include <zlib.h>

#include <algorithm>
#include <climits>
#include <string>
#include <string_view>
#include <unordered_map>

#include "heapprof/runtime/worker_natives.h"
#include "heapprof/runtime/worker_state.h"
#include "heapprof/v8/v8_util.h"

namespace heapprof::internal {
namespace {

// zlib's windowBits for a format: gzip wrapper, zlib wrapper, or none; 0 if unknown.
int WindowBits(const std::string& format) {
  if (format == "gzip") return 15 + 16;
  if (format == "deflate") return 15;
  if (format == "deflate-raw") return -15;
  return 0;
}

// What zlib allocates for a stream (zconf.h's memory formulas for windowBits
// 15, memLevel 8), reported to V8 so a dropped stream is collected as soon as
// its real size warrants.
constexpr int64_t kDeflateBytes = (1 << 17) + (1 << 17) + 8 * 1024;
constexpr int64_t kInflateBytes = (1 << 15) + 8 * 1024;

void ThrowTypeError(v8::Isolate* isolate, const char* message) {
  isolate->ThrowException(v8::Exception::TypeError(NewString(isolate, message)));
}

}  // namespace

// One CompressionStream's or DecompressionStream's zlib state.
struct ZlibStream {
  z_stream z{};
  bool inflating = false;
  bool initialized = false;  // zlib's init succeeded, so its end must run
  bool ended = false;        // zlib reached the end of the stream
  v8::Isolate* isolate = nullptr;
  v8::Global<v8::Object> handle;  // weak: the prelude's reference decides its life
  ZlibStreams::Impl* owner = nullptr;

  ~ZlibStream() {
    if (!initialized) return;
    if (inflating) {
      inflateEnd(&z);
    } else {
      deflateEnd(&z);
    }
  }
  int64_t bytes() const { return inflating ? kInflateBytes : kDeflateBytes; }
};

struct ZlibStreams::Impl {
  std::unordered_map<ZlibStream*, std::unique_ptr<ZlibStream>> live;
  v8::Global<v8::ObjectTemplate> handle_template;  // objects with one internal field: the ZlibStream

  // Frees a stream and tells V8 its memory is gone; `stream` dangles after.
  void Free(ZlibStream* stream, bool report) {
    auto it = live.find(stream);
    if (it == live.end()) return;
    v8::Isolate* isolate = stream->isolate;
    int64_t bytes = stream->bytes();
    live.erase(it);
    if (report) isolate->AdjustAmountOfExternalAllocatedMemory(-bytes);
  }

  // V8 collected the handle: reset it now (all a first-pass callback may do),
  // free in the second pass, where the V8 API is allowed again.
  static void OnCollected(const v8::WeakCallbackInfo<ZlibStream>& info) {
    ZlibStream* stream = info.GetParameter();
    stream->handle.Reset();
    info.SetSecondPassCallback([](const v8::WeakCallbackInfo<ZlibStream>& second) {
      ZlibStream* s = second.GetParameter();
      s->owner->Free(s, true);
    });
  }
};

ZlibStreams::ZlibStreams() : impl_(std::make_unique<Impl>()) {}
// The isolate still exists (WorkerRuntime::State declares it first); the
// handles are reset by the streams' destructors, without telling V8 of memory
// it is about to drop with the isolate.
ZlibStreams::~ZlibStreams() = default;

namespace {

ZlibStreams::Impl* StreamsOf(const v8::FunctionCallbackInfo<v8::Value>& info) {
  auto* state = static_cast<WorkerRuntime::State*>(info.Data().As<v8::External>()->Value());
  return state->zlib_streams.impl();
}

// The stream behind a handle, or null after throwing.
ZlibStream* StreamOf(v8::Isolate* isolate, v8::Local<v8::Value> value) {
  if (!value->IsObject() || value.As<v8::Object>()->InternalFieldCount() != 1) {
    ThrowTypeError(isolate, "expected a compression stream handle");
    return nullptr;
  }
  auto* stream = static_cast<ZlibStream*>(value.As<v8::Object>()->GetAlignedPointerFromInternalField(0));
  if (stream == nullptr) ThrowTypeError(isolate, "the compression stream is closed");
  return stream;
}

}  // namespace

void ZlibOpen(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  v8::Local<v8::Context> context = isolate->GetCurrentContext();
  ZlibStreams::Impl* streams = StreamsOf(info);
  std::string mode = ValueToString(isolate, context, info[0]);
  int window_bits = WindowBits(ValueToString(isolate, context, info[1]));
  if (window_bits == 0 || (mode != "deflate" && mode != "inflate")) {
    ThrowTypeError(isolate, "The compression format must be either 'deflate', 'deflate-raw' or 'gzip'.");
    return;
  }
  if (streams->handle_template.IsEmpty()) {
    v8::Local<v8::ObjectTemplate> templ = v8::ObjectTemplate::New(isolate);
    templ->SetInternalFieldCount(1);
    streams->handle_template.Reset(isolate, templ);
  }
  v8::Local<v8::Object> handle;
  if (!streams->handle_template.Get(isolate)->NewInstance(context).ToLocal(&handle)) return;

  auto stream = std::make_unique<ZlibStream>();
  stream->inflating = mode == "inflate";
  int status = stream->inflating
                   ? inflateInit2(&stream->z, window_bits)
                   : deflateInit2(&stream->z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, window_bits, 8, Z_DEFAULT_STRATEGY);
  if (status != Z_OK) {
    ThrowTypeError(isolate, "zlib could not start a stream (out of memory)");
    return;
  }
  stream->initialized = true;
  stream->isolate = isolate;
  stream->owner = streams;
  stream->handle.Reset(isolate, handle);
  stream->handle.SetWeak(stream.get(), &ZlibStreams::Impl::OnCollected, v8::WeakCallbackType::kParameter);
  handle->SetAlignedPointerInInternalField(0, stream.get());
  isolate->AdjustAmountOfExternalAllocatedMemory(stream->bytes());
  ZlibStream* raw = stream.get();
  streams->live.emplace(raw, std::move(stream));
  info.GetReturnValue().Set(handle);
}

void ZlibRun(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  ZlibStream* stream = StreamOf(isolate, info[0]);
  if (stream == nullptr) return;
  std::string_view input, output;
  if (!ViewBytes(info[1], &input) || !ViewBytes(info[3], &output)) {
    ThrowTypeError(isolate, "expected Uint8Arrays of input and output");
    return;
  }
  bool finish = info[2]->BooleanValue(isolate);
  z_stream& z = stream->z;
  size_t read = 0, written = 0;
  if (stream->ended) {
    if (stream->inflating && !input.empty()) {
      ThrowTypeError(isolate, "Trailing bytes after end of compressed data");
      return;
    }
  } else {
    // No V8 allocation until zlib is done: the views stay where they are.
    uInt in_size = static_cast<uInt>(std::min<size_t>(input.size(), UINT_MAX));
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(input.data()));
    z.avail_in = in_size;
    z.next_out = reinterpret_cast<Bytef*>(const_cast<char*>(output.data()));
    z.avail_out = static_cast<uInt>(std::min<size_t>(output.size(), UINT_MAX));
    uInt out_size = z.avail_out;
    int status = stream->inflating ? inflate(&z, Z_NO_FLUSH) : deflate(&z, finish ? Z_FINISH : Z_NO_FLUSH);
    read = in_size - z.avail_in;
    written = out_size - z.avail_out;
    z.next_in = nullptr;
    z.next_out = nullptr;
    if (status == Z_STREAM_END) {
      stream->ended = true;
      if (stream->inflating && z.avail_in > 0) {
        ThrowTypeError(isolate, "Trailing bytes after end of compressed data");
        return;
      }
    } else if (status != Z_OK && status != Z_BUF_ERROR) {  // Z_BUF_ERROR: no progress possible, not an error
      ThrowTypeError(isolate, stream->inflating ? "Decompression failed." : "Compression failed.");
      return;
    } else if (stream->inflating && finish && written == 0 && z.avail_in == 0) {
      ThrowTypeError(isolate, "Called close() on a decompression stream with incomplete data");
      return;
    }
  }
  v8::Local<v8::Value> result[] = {v8::Number::New(isolate, static_cast<double>(read)),
                                   v8::Number::New(isolate, static_cast<double>(written)),
                                   v8::Boolean::New(isolate, stream->ended)};
  info.GetReturnValue().Set(v8::Array::New(isolate, result, 3));
}

void ZlibClose(const v8::FunctionCallbackInfo<v8::Value>& info) {
  if (!info[0]->IsObject() || info[0].As<v8::Object>()->InternalFieldCount() != 1) return;
  v8::Local<v8::Object> handle = info[0].As<v8::Object>();
  auto* stream = static_cast<ZlibStream*>(handle->GetAlignedPointerFromInternalField(0));
  if (stream == nullptr) return;
  handle->SetAlignedPointerInInternalField(0, nullptr);
  stream->handle.Reset();
  StreamsOf(info)->Free(stream, true);
}

}  // namespace heapprof::internal
