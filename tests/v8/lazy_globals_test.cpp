// The lazy-globals table (heapprof/v8/lazy_globals.h) on a real isolate: a
// name is made at its first read and then is a plain data property; until
// then it is listed, answers `in` and typeof, and gives way to an assignment,
// a definition or a delete; a make that throws leaves the name to be tried
// again.
#include <v8.h>

#include <catch2/catch.hpp>

#include <string>

#include "heapprof/v8/isolate_state.h"
#include "heapprof/v8/v8_host.h"

using namespace heapprof;

namespace {

int g_calls = 0;
bool g_throw_first = false;

// make(name): "made:" + name, or a TypeError at the first call when asked.
void Make(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  if (g_throw_first && g_calls++ == 0) {
    isolate->ThrowException(v8::Exception::TypeError(v8::String::NewFromUtf8Literal(isolate, "not yet")));
    return;
  }
  if (!g_throw_first) ++g_calls;
  v8::String::Utf8Value name(isolate, info[0]);
  info.GetReturnValue().Set(v8::String::NewFromUtf8(isolate, ("made:" + std::string(*name)).c_str()).ToLocalChecked());
}

// An isolate with lazy globals a, b, c, d, e, f (one make).
Isolate LazyIsolate() {
  IsolateOptions options;
  options.lazy_globals = true;
  Result<Isolate> iso = Isolate::Create(options);
  REQUIRE(iso.ok());
  internal::LazyGlobals* table = internal::LazyGlobalsOf(iso.value());
  REQUIRE(table != nullptr);
  v8::Isolate* isolate = iso->get();
  v8::Isolate::Scope isolate_scope(isolate);
  v8::HandleScope handles(isolate);
  v8::Local<v8::Context> context = internal::IsolateAccess::Of(iso.value())->Context();
  v8::Context::Scope context_scope(context);
  v8::Local<v8::Function> make = v8::Function::New(context, Make).ToLocalChecked();
  for (const char* name : {"a", "b", "c", "d", "e", "f"}) table->Add(isolate, name, make);
  table->Add(isolate, "hidden", make, /*enumerable=*/false);
  return std::move(iso).value();
}

}  // namespace

TEST_CASE("lazy globals are made at their first read and then are plain data properties") {
  g_calls = 0;
  g_throw_first = false;
  Isolate iso = LazyIsolate();
  // Listed and present before any read, without being made.
  CHECK(iso.RunScript("Object.keys(globalThis).filter(k => k.length === 1).join()").value() == "a,b,c,d,e,f");
  CHECK(iso.RunScript("['a' in globalThis, Object.prototype.hasOwnProperty.call(globalThis, 'b')].join()").value() ==
        "true,true");
  CHECK(g_calls == 0);
  CHECK(internal::LazyGlobalsOf(iso)->Pending().size() == 7);
  // typeof and a read make it once; the descriptor is a plain data property's.
  CHECK(iso.RunScript("typeof a + ' ' + a + ' ' + globalThis.a").value() == "string made:a made:a");
  CHECK(g_calls == 1);
  CHECK(iso.RunScript("const d = Object.getOwnPropertyDescriptor(globalThis, 'b');"
                      "[d.value, d.writable, d.enumerable, d.configurable, 'get' in d].join()")
            .value() == "made:b,true,true,true,false");
  CHECK(g_calls == 2);
  CHECK(internal::LazyGlobalsOf(iso)->Pending().size() == 5);
  // Once made, a delete is final: the table does not make it again.
  CHECK(iso.RunScript("delete globalThis.a; typeof a").value() == "undefined");
  CHECK(g_calls == 2);
}

TEST_CASE("lazy globals give way to an assignment a definition or a delete before their first read") {
  g_calls = 0;
  g_throw_first = false;
  Isolate iso = LazyIsolate();
  // A strict-mode assignment to a name the object does not have would throw; this one is a global.
  CHECK(iso.RunScript("'use strict'; c = 1; c").value() == "1");
  CHECK(g_calls == 0);
  // V8 reads the current descriptor before it defines (ValidateAndApplyPropertyDescriptor), so
  // this one is made first (as a lazy data property was), then replaced.
  CHECK(iso.RunScript("Object.defineProperty(globalThis, 'd', { value: 2, enumerable: false });"
                      "[d, Object.keys(globalThis).includes('d')].join()")
            .value() == "2,false");
  CHECK(g_calls == 1);
  CHECK(iso.RunScript("[delete globalThis.e, 'e' in globalThis, typeof e].join()").value() == "true,false,undefined");
  auto missing = iso.RunScript("'use strict'; e");
  REQUIRE_FALSE(missing.ok());
  CHECK_THAT(missing.status().message(), Catch::Contains("ReferenceError"));
  CHECK(g_calls == 1);
  CHECK(internal::LazyGlobalsOf(iso)->Pending() == std::vector<std::string>{"a", "b", "f", "hidden"});
  // Names no one added are not the table's.
  CHECK(iso.RunScript("typeof zz + ' ' + ('zz' in globalThis)").value() == "undefined false");
}

TEST_CASE("a lazy global whose make throws stays pending and is made at the next read") {
  g_calls = 0;
  g_throw_first = true;
  Isolate iso = LazyIsolate();
  auto first = iso.RunScript("f");
  REQUIRE_FALSE(first.ok());
  CHECK_THAT(first.status().message(), Catch::Contains("not yet"));
  CHECK(iso.RunScript("'f' in globalThis").value() == "true");
  CHECK(iso.RunScript("f").value() == "made:f");
  CHECK(g_calls == 2);
}

TEST_CASE("a lazy global added as not enumerable is listed by name only and stays so once made") {
  g_calls = 0;
  g_throw_first = false;
  Isolate iso = LazyIsolate();
  CHECK(iso.RunScript("[Object.keys(globalThis).includes('hidden'), Object.getOwnPropertyNames(globalThis)"
                      ".includes('hidden'), 'hidden' in globalThis].join()")
            .value() == "false,true,true");
  CHECK(g_calls == 0);
  CHECK(iso.RunScript("const d = Object.getOwnPropertyDescriptor(globalThis, 'hidden');"
                      "[d.value, d.writable, d.enumerable, d.configurable].join()")
            .value() == "made:hidden,true,false,true");
  CHECK(iso.RunScript("Object.keys(globalThis).includes('hidden')").value() == "false");
  // Assigned before its first read, it keeps its attributes.
  Isolate other = LazyIsolate();
  CHECK(other.RunScript("'use strict'; hidden = 5; [hidden, Object.keys(globalThis).includes('hidden')].join()")
            .value() == "5,false");
  // Names no one added of every length the table has are still turned away.
  CHECK(iso.RunScript("[typeof g, typeof hiddeN, typeof hidden2].join()").value() == "undefined,undefined,undefined");
}
