// Globals made at their first use: one named interceptor on a context's
// global object answers for names whose value a make function returns. Until
// a script reads one (or asks whether it is there, or for its descriptor),
// the heap holds nothing for it: the name waits in this C++ table. A name
// read is made a plain data property of the global object (writable and
// configurable, enumerable unless added otherwise, as an assignment or
// Object.defineProperty would make it), and the table
// forgets it; so does a name assigned or deleted before its first read (a
// definition, Object.defineProperty, reads the current descriptor first, so
// it makes the value, then replaces it). The interceptor is non-masking: V8 asks it only about names the
// global object and its prototypes do not have.
#pragma once

#include <v8.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace heapprof::internal {

class LazyGlobals {
 public:
  LazyGlobals() = default;
  LazyGlobals(const LazyGlobals&) = delete;
  LazyGlobals& operator=(const LazyGlobals&) = delete;

  // Puts the interceptor on the template of a context's global object; the
  // table must outlive the context.
  void InstallOn(v8::Isolate* isolate, v8::Local<v8::ObjectTemplate> global);
  // name's value is make(name), called at the name's first read; the
  // property is enumerable or not, writable and configurable either way. A
  // name added again takes the later make.
  void Add(v8::Isolate* isolate, std::string_view name, v8::Local<v8::Function> make, bool enumerable = true);
  // The names not yet made, in the order they were added.
  std::vector<std::string> Pending() const;
  // Drops the make functions (before the isolate is disposed).
  void Reset();

 private:
  struct Entry {
    std::string name;
    size_t make = 0;  // index into makes_
    bool pending = false;
    bool enumerable = true;
  };
  struct Hash {  // lets index_ be searched by a string_view
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  // The index of a name's pending entry, or size_t(-1).
  size_t Find(v8::Isolate* isolate, v8::Local<v8::Name> name) const;

  static void Get(v8::Local<v8::Name> name, const v8::PropertyCallbackInfo<v8::Value>& info);
  static void Query(v8::Local<v8::Name> name, const v8::PropertyCallbackInfo<v8::Integer>& info);
  static void Set(v8::Local<v8::Name> name, v8::Local<v8::Value> value,
                  const v8::PropertyCallbackInfo<v8::Value>& info);
  static void Define(v8::Local<v8::Name> name, const v8::PropertyDescriptor& descriptor,
                     const v8::PropertyCallbackInfo<v8::Value>& info);
  static void Delete(v8::Local<v8::Name> name, const v8::PropertyCallbackInfo<v8::Boolean>& info);
  static void Enumerate(const v8::PropertyCallbackInfo<v8::Array>& info);
  // Makes the property with the entry's attributes; false when that threw.
  bool Define(v8::Local<v8::Context> context, v8::Local<v8::Object> global, v8::Local<v8::Name> name,
              v8::Local<v8::Value> value, size_t entry) const;

  std::vector<Entry> entries_;
  std::unordered_map<std::string, size_t, Hash, std::equal_to<>> index_;  // name -> entries_
  // Bit n set when a name of n UTF-16 units was added (bit 63: 63 or more):
  // most lookups that reach the interceptor are of names nobody added
  // (`typeof window`), turned away here before the name is copied.
  uint64_t lengths_ = 0;
  std::vector<v8::Global<v8::Function>> makes_;
};

}  // namespace heapprof::internal
