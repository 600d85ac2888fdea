// Small conversions between V8 values and std types, shared by the V8-facing code.
#pragma once

#include <v8.h>

#include <string>
#include <string_view>

namespace heapprof::internal {

// UTF-8 copy of a V8 string (empty for an empty handle).
std::string ToStdString(v8::Isolate* isolate, v8::Local<v8::String> s);
// UTF-8 copy of any value's ToString(), or fallback when that throws.
std::string ValueToString(v8::Isolate* isolate, v8::Local<v8::Context> context, v8::Local<v8::Value> value,
                          std::string_view fallback = "<unprintable>");
v8::Local<v8::String> NewString(v8::Isolate* isolate, std::string_view s);
// "message\n    at ..." for a caught exception: the stack when there is one.
std::string DescribeException(v8::Isolate* isolate, v8::Local<v8::Context> context, const v8::TryCatch& try_catch);

}  // namespace heapprof::internal
