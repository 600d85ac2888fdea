#include "heapprof/v8/lazy_globals.h"

#include <algorithm>

#include "heapprof/v8/v8_util.h"

namespace heapprof::internal {
namespace {

constexpr size_t kNone = static_cast<size_t>(-1);

LazyGlobals* TableOf(v8::Local<v8::Value> data) { return static_cast<LazyGlobals*>(data.As<v8::External>()->Value()); }

uint64_t LengthBit(size_t length) { return uint64_t{1} << std::min<size_t>(length, 63); }

}  // namespace

void LazyGlobals::InstallOn(v8::Isolate* isolate, v8::Local<v8::ObjectTemplate> global) {
  v8::NamedPropertyHandlerConfiguration config(nullptr);
  config.getter = Get;
  config.setter = Set;
  config.query = Query;
  config.deleter = Delete;
  config.enumerator = Enumerate;
  config.definer = Define;
  config.data = v8::External::New(isolate, this);
  config.flags =
      static_cast<v8::PropertyHandlerFlags>(static_cast<int>(v8::PropertyHandlerFlags::kNonMasking) |
                                            static_cast<int>(v8::PropertyHandlerFlags::kOnlyInterceptStrings));
  global->SetHandler(config);
}

void LazyGlobals::Add(v8::Isolate* isolate, std::string_view name, v8::Local<v8::Function> make, bool enumerable) {
  size_t index = makes_.size();
  for (size_t i = 0; i < makes_.size(); ++i) {
    if (makes_[i].Get(isolate) == make) index = i;
  }
  if (index == makes_.size()) makes_.emplace_back(isolate, make);
  const auto [at, added] = index_.try_emplace(std::string(name), entries_.size());
  if (added) entries_.push_back(Entry{std::string(name), index, true});
  entries_[at->second].make = index;
  entries_[at->second].pending = true;
  entries_[at->second].enumerable = enumerable;
  // The names are ASCII (V8's property names of the runtime), so bytes and UTF-16 units agree.
  lengths_ |= LengthBit(name.size());
}

std::vector<std::string> LazyGlobals::Pending() const {
  std::vector<std::string> out;
  for (const Entry& entry : entries_) {
    if (entry.pending) out.push_back(entry.name);
  }
  return out;
}

void LazyGlobals::Reset() {
  makes_.clear();
  entries_.clear();
  index_.clear();
  lengths_ = 0;
}

size_t LazyGlobals::Find(v8::Isolate* isolate, v8::Local<v8::Name> name) const {
  if (!name->IsString()) return kNone;
  v8::Local<v8::String> text = name.As<v8::String>();
  const int length = text->Length();
  if ((lengths_ & LengthBit(static_cast<size_t>(length))) == 0) return kNone;
  char stack[64];
  std::string heap;
  std::string_view key;
  if (length < static_cast<int>(sizeof stack) && text->IsOneByte()) {
    text->WriteOneByte(isolate, reinterpret_cast<uint8_t*>(stack), 0, length, v8::String::NO_NULL_TERMINATION);
    key = std::string_view(stack, static_cast<size_t>(length));
  } else {
    heap = ToStdString(isolate, text);
    key = heap;
  }
  const auto at = index_.find(key);
  return at != index_.end() && entries_[at->second].pending ? at->second : kNone;
}

bool LazyGlobals::Define(v8::Local<v8::Context> context, v8::Local<v8::Object> global, v8::Local<v8::Name> name,
                         v8::Local<v8::Value> value, size_t entry) const {
  const v8::PropertyAttribute attributes = entries_[entry].enumerable ? v8::None : v8::DontEnum;
  return !global->DefineOwnProperty(context, name, value, attributes).IsNothing();
}

// The first read: make(name) becomes the global's value. The entry stops
// being pending first, so the definition below goes through the interceptor
// untouched; a make that throws leaves the name pending, to be tried again.
void LazyGlobals::Get(v8::Local<v8::Name> name, const v8::PropertyCallbackInfo<v8::Value>& info) {
  LazyGlobals* self = TableOf(info.Data());
  v8::Isolate* isolate = info.GetIsolate();
  const size_t i = self->Find(isolate, name);
  if (i == kNone) return;
  self->entries_[i].pending = false;
  v8::Local<v8::Context> context = isolate->GetCurrentContext();
  v8::Local<v8::Function> make = self->makes_[self->entries_[i].make].Get(isolate);
  v8::Local<v8::Value> args[] = {name};
  v8::Local<v8::Value> value;
  if (!make->Call(context, v8::Undefined(isolate), 1, args).ToLocal(&value) ||
      !self->Define(context, info.Holder(), name, value, i)) {
    self->entries_[i].pending = true;  // (make may have added names: the index still holds)
    return;
  }
  info.GetReturnValue().Set(value);
}

void LazyGlobals::Query(v8::Local<v8::Name> name, const v8::PropertyCallbackInfo<v8::Integer>& info) {
  LazyGlobals* self = TableOf(info.Data());
  const size_t i = self->Find(info.GetIsolate(), name);
  if (i == kNone) return;
  info.GetReturnValue().Set(static_cast<int32_t>(self->entries_[i].enumerable ? v8::None : v8::DontEnum));
}

// An assignment before the first read replaces the value that would have
// been made, with the name's attributes (in strict code too, where an
// assignment to a global the object does not have would throw).
void LazyGlobals::Set(v8::Local<v8::Name> name, v8::Local<v8::Value> value,
                      const v8::PropertyCallbackInfo<v8::Value>& info) {
  LazyGlobals* self = TableOf(info.Data());
  v8::Isolate* isolate = info.GetIsolate();
  const size_t i = self->Find(isolate, name);
  if (i == kNone) return;
  self->entries_[i].pending = false;
  if (!self->Define(isolate->GetCurrentContext(), info.Holder(), name, value, i)) return;
  info.GetReturnValue().Set(value);
}

// Object.defineProperty before the first read: the definition goes on as
// for any new property.
void LazyGlobals::Define(v8::Local<v8::Name> name, const v8::PropertyDescriptor& /*descriptor*/,
                         const v8::PropertyCallbackInfo<v8::Value>& info) {
  LazyGlobals* self = TableOf(info.Data());
  const size_t i = self->Find(info.GetIsolate(), name);
  if (i != kNone) self->entries_[i].pending = false;
}

void LazyGlobals::Delete(v8::Local<v8::Name> name, const v8::PropertyCallbackInfo<v8::Boolean>& info) {
  LazyGlobals* self = TableOf(info.Data());
  const size_t i = self->Find(info.GetIsolate(), name);
  if (i == kNone) return;
  self->entries_[i].pending = false;
  info.GetReturnValue().Set(true);
}

void LazyGlobals::Enumerate(const v8::PropertyCallbackInfo<v8::Array>& info) {
  LazyGlobals* self = TableOf(info.Data());
  v8::Isolate* isolate = info.GetIsolate();
  std::vector<v8::Local<v8::Value>> names;
  for (const Entry& entry : self->entries_) {
    if (entry.pending) names.push_back(NewString(isolate, entry.name));
  }
  info.GetReturnValue().Set(v8::Array::New(isolate, names.data(), names.size()));
}

}  // namespace heapprof::internal
