// RuntimeScriptSource (a bundle as an external one-byte string) and
// natives.lazyProperty.
#include "heapprof/runtime/lazy_runtime.h"

#include <cstring>
#include <tuple>

#include "heapprof/v8/v8_util.h"

namespace heapprof::internal {
namespace {

// V8 owns the resource and deletes it (Dispose) when the string dies or the
// isolate goes; the characters are static and never freed.
class StaticAscii final : public v8::String::ExternalOneByteStringResource {
 public:
  explicit StaticAscii(const char* data) : data_(data), length_(std::strlen(data)) {}
  const char* data() const override { return data_; }
  size_t length() const override { return length_; }

 private:
  const char* data_;
  size_t length_;
};

// make(name): one make function can serve many properties.
void LazyPropertyGetter(v8::Local<v8::Name> name, const v8::PropertyCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  v8::Local<v8::Value> value;
  v8::Local<v8::Value> args[] = {name};
  if (info.Data()
          .As<v8::Function>()
          ->Call(isolate->GetCurrentContext(), v8::Undefined(isolate), 1, args)
          .ToLocal(&value)) {
    info.GetReturnValue().Set(value);
  }
}

}  // namespace

v8::Local<v8::String> RuntimeScriptSource(v8::Isolate* isolate, const char* ascii) {
  return v8::String::NewExternalOneByte(isolate, new StaticAscii(ascii)).ToLocalChecked();
}

void LazyProperty(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  v8::Local<v8::Context> context = isolate->GetCurrentContext();
  if (!info[0]->IsObject() || !info[1]->IsString() || !info[2]->IsFunction()) {
    isolate->ThrowException(
        v8::Exception::TypeError(NewString(isolate, "lazyProperty(object, name, make, enumerable)")));
    return;
  }
  const v8::PropertyAttribute attributes = info[3]->BooleanValue(isolate) ? v8::None : v8::DontEnum;
  // Nothing to do when it fails: the exception is pending for the caller.
  std::ignore = info[0].As<v8::Object>()->SetLazyDataProperty(context, info[1].As<v8::String>(), LazyPropertyGetter,
                                                              info[2], attributes);
}

}  // namespace heapprof::internal
