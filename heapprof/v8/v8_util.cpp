#include "heapprof/v8/v8_util.h"

namespace heapprof::internal {

namespace {

// Newer V8 (12.x+) replaced Utf8Length/WriteUtf8 with the V2 variants.
template <typename S>
concept HasUtf8V2 = requires(const S& s, v8::Isolate* i, char* buf) {
  s.Utf8LengthV2(i);
  s.WriteUtf8V2(i, buf, size_t{0});
};

template <typename S>
std::string CopyUtf8(v8::Isolate* isolate, const S* s) {
  if constexpr (HasUtf8V2<S>) {
    std::string out(s->Utf8LengthV2(isolate), '\0');
    s->WriteUtf8V2(isolate, out.data(), out.size());
    return out;
  } else {
    int length = s->Utf8Length(isolate);
    std::string out(static_cast<size_t>(length), '\0');
    s->WriteUtf8(isolate, out.data(), length, nullptr, S::NO_NULL_TERMINATION);
    return out;
  }
}

}  // namespace

std::string ToStdString(v8::Isolate* isolate, v8::Local<v8::String> s) {
  if (s.IsEmpty()) return {};
  return CopyUtf8<v8::String>(isolate, *s);
}

std::string ValueToString(v8::Isolate* isolate, v8::Local<v8::Context> context, v8::Local<v8::Value> value,
                          std::string_view fallback) {
  if (value.IsEmpty()) return std::string(fallback);
  v8::TryCatch try_catch(isolate);
  v8::Local<v8::String> s;
  if (!value->ToString(context).ToLocal(&s)) return std::string(fallback);
  return ToStdString(isolate, s);
}

v8::Local<v8::String> NewString(v8::Isolate* isolate, std::string_view s) {
  return v8::String::NewFromUtf8(isolate, s.data(), v8::NewStringType::kNormal, static_cast<int>(s.size()))
      .ToLocalChecked();
}

std::string DescribeException(v8::Isolate* isolate, v8::Local<v8::Context> context, const v8::TryCatch& try_catch) {
  if (try_catch.HasTerminated()) return "execution terminated";
  v8::Local<v8::Value> exception = try_catch.Exception();
  std::string text = ValueToString(isolate, context, exception, "<exception>");
  v8::Local<v8::Value> stack;
  if (try_catch.StackTrace(context).ToLocal(&stack) && stack->IsString()) {
    std::string s = ToStdString(isolate, stack.As<v8::String>());
    if (!s.empty()) text = s;
  } else if (v8::Local<v8::Message> message = try_catch.Message(); !message.IsEmpty()) {
    std::string where = ToStdString(isolate, message->GetScriptResourceName()->IsString()
                                                 ? message->GetScriptResourceName().As<v8::String>()
                                                 : v8::Local<v8::String>());
    int line = message->GetLineNumber(context).FromMaybe(0);
    if (!where.empty()) text += "\n    at " + where + ":" + std::to_string(line);
  }
  return text;
}

}  // namespace heapprof::internal
