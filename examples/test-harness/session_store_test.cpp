// A Catch2 suite that checks a JS module for leaks and allocation budgets
// with heapprof's matchers. The leak test is expected to fail ([!shouldfail]):
// it shows what a real leak report looks like. A second test checks, without
// failing, that the matcher catches the leak and explains it.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>

#include "heapprof/core/pprof.h"
#include "heapprof/testing/matchers.h"
#include "heapprof/testing/window.h"

using heapprof::Profile;
using heapprof::testing::AllocatesLessThan;
using heapprof::testing::ProfileScript;
using heapprof::testing::RetainsLessThan;

namespace {

std::string ReadModule() {
  std::ifstream in(HEAPPROF_EXAMPLE_DIR "/session_store.js");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A fresh isolate with the module loaded, per test.
struct Store {
  heapprof::Status v8_started = heapprof::testing::InitializeV8ForTests();
  heapprof::Isolate isolate = heapprof::Isolate::Create().value();
  Store() {
    REQUIRE(v8_started.ok());
    auto loaded = isolate.RunScript(ReadModule(), "session_store.js");
    INFO(loaded.status().message());
    REQUIRE(loaded.ok());
  }
  // Runs `js` in a profiling window; fails the test if it throws.
  Profile Run(const std::string& js) {
    auto profile = ProfileScript(isolate, js, "driver.js");
    INFO(profile.status().message());
    REQUIRE(profile.ok());
    return std::move(profile).value();
  }
};

constexpr const char* kLeakyTraffic = "for (let i = 0; i < 4000; ++i) remember(i);";

}  // namespace

TEST_CASE("rendering pages stays within its allocation budget") {
  Store store;
  Profile profile = store.Run("for (let i = 0; i < 50; ++i) renderPage('ada');");
  // ~50 pages of 200 rows: about 1-2 MiB of strings and arrays.
  CHECK_THAT(profile, AllocatesLessThan(6 << 20).From("^renderPage$"));
  CHECK_THAT(profile, RetainsLessThan(256 << 10).From("^renderPage$"));
}

TEST_CASE("the fixed store keeps only recent sessions") {
  Store store;
  Profile profile = store.Run("for (let i = 0; i < 4000; ++i) rememberRecent(i);");
  CHECK_THAT(profile, RetainsLessThan(256 << 10).InScript("session_store\\.js$"));
}

// Expected to fail: remember() keeps all 4000 sessions (~8 MiB). Run this
// test alone to read the report a leak produces.
TEST_CASE("the session store does not leak", "[!shouldfail]") {
  Store store;
  Profile profile = store.Run(kLeakyTraffic);
  CHECK_THAT(profile, RetainsLessThan(256 << 10).From("^remember"));
}

TEST_CASE("the leak matcher names the leaking function, its bytes and the saved profile") {
  Store store;
  Profile profile = store.Run(kLeakyTraffic);
  auto matcher = RetainsLessThan(256 << 10).From("^remember");
  REQUIRE_FALSE(matcher.match(profile));
  std::string message = matcher.describe();
  INFO(message);
  CHECK(message.find("retains less than 256 KiB from functions matching /^remember/") == 0);
  CHECK(message.find("remember (session_store.js:5) <- (anonymous driver.js") != std::string::npos);
  CHECK(message.find("rememberRecent") == std::string::npos);
  // About 4000 x (256 x 8 bytes + headers): several MiB, reported in the message.
  CHECK(matcher.measured_bytes() > (4 << 20));
  CHECK(message.find(std::to_string(matcher.measured_bytes()) + " bytes") != std::string::npos);
  // The profile is on disk and is a readable pprof naming the culprit.
  REQUIRE_FALSE(matcher.saved_profile_path().empty());
  CHECK(message.find(matcher.saved_profile_path()) != std::string::npos);
  auto saved = heapprof::ReadPprofFile(matcher.saved_profile_path());
  REQUIRE(saved.ok());
  CHECK(saved->samples.size() == profile.samples.size());
}
