// Chrome .heapprofile export and import: tree shape, 0-based positions, totals,
// what survives a round trip, and clear errors for malformed files.
#include <catch2/catch.hpp>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "heapprof/core/folded.h"
#include "heapprof/core/heapprofile.h"
#include "heapprof/core/inspector_sizes.h"
#include "heapprof/core/pprof.h"
#include "heapprof/core/profile_builder.h"
#include "unit/test_profiles.h"

using namespace heapprof;
using heapprof::testing::HandMadeSnapshot;
using Json = nlohmann::json;

namespace {

struct TreeFacts {
  int64_t self_total = 0;
  std::set<int64_t> ids;
  std::map<std::string, Json> frames;  // functionName -> callFrame
  size_t max_depth = 0;
};

void Walk(const Json& node, size_t depth, TreeFacts& facts) {
  REQUIRE(node.contains("callFrame"));
  REQUIRE(node.contains("selfSize"));
  REQUIRE(node.contains("id"));
  REQUIRE(node.contains("children"));
  facts.self_total += node["selfSize"].get<int64_t>();
  CHECK(facts.ids.insert(node["id"].get<int64_t>()).second);
  facts.frames[node["callFrame"]["functionName"].get<std::string>()] = node["callFrame"];
  facts.max_depth = std::max(facts.max_depth, depth);
  for (const Json& child : node["children"]) Walk(child, depth + 1, facts);
}

std::string Folded(const Profile& p, const char* type) {
  Result<std::string> text = EncodeFolded(p, {type, false});
  REQUIRE(text.ok());
  return *text;
}

}  // namespace

TEST_CASE("heapprofile export: a DevTools tree with 0-based positions and matching totals") {
  Profile p = BuildProfile(HandMadeSnapshot());
  for (const char* type : {"inuse_space", "alloc_space"}) {
    INFO(type);
    Result<std::string> text = EncodeHeapProfile(p, {type});
    REQUIRE(text.ok());
    Json doc = Json::parse(*text);
    const Json& head = doc["head"];
    CHECK(head["callFrame"]["functionName"] == "(root)");
    CHECK(head["callFrame"]["lineNumber"] == -1);
    CHECK(head["selfSize"] == 0);

    TreeFacts facts;
    Walk(head, 0, facts);
    CHECK(facts.self_total == p.Total(p.FindSampleType(type)));
    CHECK(facts.max_depth == 4);  // root, main, handler, parse, (anonymous)

    const Json& handler = facts.frames.at("handler");
    CHECK(handler["url"] == "file:///srv/worker.js");
    CHECK(handler["lineNumber"] == 9);  // start line 10, 0-based
    CHECK(handler["columnNumber"] == 2);
    CHECK(handler["scriptId"] == facts.frames.at("main")["scriptId"]);  // same script
    CHECK(handler["scriptId"] != facts.frames.at("leak")["scriptId"]);

    int64_t sample_total = 0;
    std::set<int64_t> ordinals;
    for (const Json& s : doc["samples"]) {
      sample_total += s["size"].get<int64_t>();
      CHECK(facts.ids.count(s["nodeId"].get<int64_t>()) == 1);
      CHECK(ordinals.insert(s["ordinal"].get<int64_t>()).second);
    }
    CHECK(sample_total == facts.self_total);
  }
  // (GC) allocated but holds nothing: it appears only in the alloc tree.
  CHECK(EncodeHeapProfile(p, {"alloc_space"})->find("\"(GC)\"") != std::string::npos);
  CHECK(EncodeHeapProfile(p, {"inuse_space"})->find("\"(GC)\"") == std::string::npos);
  CHECK(EncodeHeapProfile(p).value() == EncodeHeapProfile(p, {"inuse_space"}).value());
  CHECK_FALSE(EncodeHeapProfile(p, {"wall"}).ok());
}

TEST_CASE("heapprofile round trip keeps stacks, names, positions and the chosen type") {
  Profile original = BuildProfile(HandMadeSnapshot());
  for (const char* type : {"inuse_space", "alloc_space"}) {
    INFO(type);
    Result<std::string> text = EncodeHeapProfile(original, {type});
    REQUIRE(text.ok());
    Result<Profile> back = DecodeHeapProfile(*text);
    REQUIRE(back.ok());
    REQUIRE(ValidateProfile(*back).ok());
    // Both halves of the imported profile hold the exported type.
    CHECK(back->Total(kInuseSpace) == original.Total(original.FindSampleType(type)));
    CHECK(back->Total(kAllocSpace) == back->Total(kInuseSpace));
    CHECK(back->Total(kAllocObjects) == back->Total(kInuseObjects));
    CHECK(Folded(*back, "inuse_space") == Folded(original, type));

    for (const Function& f : back->functions) {
      if (back->str(f.name) == "handler") {
        CHECK(back->str(f.filename) == "file:///srv/worker.js");
        CHECK(f.start_line == 10);
      }
    }
    // And it converts to a valid pprof file.
    Result<std::string> pprof = EncodePprofGzip(*back);
    REQUIRE(pprof.ok());
    REQUIRE(DecodePprof(*pprof).ok());
  }
}

TEST_CASE("heapprofile import of a node --heap-prof shaped file") {
  // Shaped like Node 20's output: string scriptIds, -1 for unknown positions,
  // anonymous functions, selfSize that differs a little from samples[], and
  // samples naming a node that is not in the tree.
  const char* text =
      R"({"head":{"callFrame":{"functionName":"root","scriptId":"0","url":"","lineNumber":-1,"columnNumber":-1},"selfSize":0,"id":1,"children":[
    {"callFrame":{"functionName":"","scriptId":"80","url":"","lineNumber":-1,"columnNumber":-1},"selfSize":0,"id":2,"children":[
      {"callFrame":{"functionName":"retainRecords","scriptId":"81","url":"file:///app/w.js","lineNumber":1,"columnNumber":22},"selfSize":3000,"id":3,"children":[
        {"callFrame":{"functionName":"","scriptId":"81","url":"file:///app/w.js","lineNumber":4,"columnNumber":8},"selfSize":500,"id":5,"children":[]}]},
      {"callFrame":{"functionName":"","scriptId":"82","url":"","lineNumber":-1,"columnNumber":-1},"selfSize":700,"id":4,"children":[]}]}]},
    "samples":[{"size":1000,"nodeId":3,"ordinal":1},{"size":1000,"nodeId":3,"ordinal":2},{"size":500,"nodeId":3,"ordinal":3},
               {"size":500,"nodeId":5,"ordinal":4},{"size":9999,"nodeId":43,"ordinal":5}]})";
  Result<Profile> p = DecodeHeapProfile(text);
  REQUIRE(p.ok());
  REQUIRE(ValidateProfile(*p).ok());
  CHECK(p->Total(kInuseSpace) == 3000 + 500 + 700);
  CHECK(p->Total(kAllocSpace) == p->Total(kInuseSpace));
  CHECK(p->CommentValue("heapprofile_orphan_samples") == "1");

  std::map<std::string, int64_t> objects;
  std::map<std::string, std::vector<std::string>> stacks;
  for (const Sample& s : p->samples) {
    std::string leaf(p->FunctionName(s.locations.front()));
    objects[leaf] += s.values[kInuseObjects];
    std::vector<std::string> names;
    for (LocationId l : s.locations) names.emplace_back(p->FunctionName(l));
    stacks[leaf] = names;
  }
  // retainRecords: samples sum to 2500 but selfSize says 3000; sizes keep their share.
  CHECK(objects.at("retainRecords") == 3);
  CHECK(objects.at("(anonymous w.js:5:9)") == 1);
  CHECK(objects.at("(anonymous script 82)") == 0);  // selfSize without samples: space only
  CHECK(stacks.at("(anonymous w.js:5:9)") ==
        std::vector<std::string>{"(anonymous w.js:5:9)", "retainRecords", "(anonymous script 80)"});
  for (const Function& f : p->functions) {
    if (p->str(f.name) == "retainRecords") CHECK(f.start_line == 2);
    if (p->str(f.name) == "(anonymous script 82)") CHECK(f.start_line == 0);
  }
}

TEST_CASE("heapprofile import rejects malformed files with clear messages") {
  std::vector<std::pair<std::string, std::string>> cases = {
      {"", "input is empty"},
      {"{\"head\":", "not valid JSON"},
      {"[1,2]", "the top level is not a JSON object"},
      {"{\"samples\":[]}", "missing the \"head\" node tree"},
      {R"({"head":{"callFrame":{"functionName":"root"},"selfSize":0,"children":[]}})", "node #0 has no \"id\""},
      {R"({"head":{"callFrame":{"functionName":"root"},"id":1,"selfSize":0,"children":[
          {"callFrame":{"functionName":"a"},"id":1,"selfSize":0,"children":[]}]}})",
       "node id 1 is used twice"},
      {R"({"head":{"id":1,"selfSize":0,"children":[{"id":2,"selfSize":0,"children":[]}]}})",
       "node id 2 has no \"callFrame\" object"},
      {R"({"head":{"id":1,"selfSize":0,"children":[{"callFrame":{"functionName":7},"id":2,"selfSize":0}]}})",
       "node id 2: callFrame.functionName must be a string"},
      {R"({"head":{"id":1,"selfSize":0,"children":[{"callFrame":{"functionName":"f"},"id":2,"selfSize":-5}]}})",
       "node id 2 has a negative selfSize (-5)"},
      {R"({"head":{"id":1,"selfSize":"big","children":[]}})", "\"id\" and \"selfSize\" must be numbers"},
      {R"({"head":{"id":1,"selfSize":0,"children":{}}})", "node id 1: \"children\" is not an array"},
      {R"({"head":{"id":1,"selfSize":0,"children":[]},"samples":{}})", "\"samples\" is not an array"},
      {R"({"head":{"id":1,"selfSize":0,"children":[]},"samples":[{"nodeId":1}]})",
       "samples[0] needs \"size\" and \"nodeId\""},
      {R"({"head":{"id":1,"selfSize":0,"children":[]},"samples":[{"nodeId":1,"size":-1}]})",
       "samples[0] has a negative size (-1)"},
  };
  std::set<std::string> messages;
  for (const auto& [json, expected] : cases) {
    INFO(json);
    Result<Profile> p = DecodeHeapProfile(json);
    REQUIRE_FALSE(p.ok());
    CHECK(p.status().code() == ErrorCode::kDataLoss);
    CHECK_THAT(p.status().message(), Catch::Matchers::Contains(expected));
    messages.insert(p.status().message());
  }
  CHECK(messages.size() == cases.size());
}

TEST_CASE("heapprofile import survives a very deep tree") {
  const int depth = 20000;
  std::string text = R"({"head":)";
  for (int i = 1; i <= depth; ++i) {
    text += R"({"callFrame":{"functionName":"f)" + std::to_string(i) + R"(","url":"d.js","lineNumber":)" +
            std::to_string(i) + R"(},"selfSize":)" + (i == depth ? "10" : "0") + R"(,"id":)" + std::to_string(i) +
            R"(,"children":[)";
  }
  for (int i = 1; i <= depth; ++i) text += "]}";
  text += "}";
  Result<Profile> p = DecodeHeapProfile(text);
  REQUIRE(p.ok());
  REQUIRE(p->samples.size() == 1);
  CHECK(p->samples[0].locations.size() == depth - 1);  // the head is the root, not a frame
  CHECK(p->Total(kInuseSpace) == 10);
}

TEST_CASE("heapprofile import refuses a deep tree with bytes at every level") {
  // 8000 levels: with a selfSize at every level that is 32 million frames as
  // pprof samples (this used to take ~18 s and ~490 MB); with bytes only at the
  // leaf it is one sample 8000 frames deep.
  const int depth = 8000;
  auto tree = [&](bool bytes_everywhere) {
    std::string text = R"j({"head":{"callFrame":{"functionName":"(root)"},"selfSize":0,"id":0,"children":[)j";
    for (int i = 1; i <= depth; ++i) {
      const bool bytes = bytes_everywhere || i == depth;
      text += R"({"callFrame":{"functionName":"f)" + std::to_string(i) + R"(","url":"d.js","lineNumber":)" +
              std::to_string(i) + R"(},"selfSize":)" + (bytes ? "64" : "0") + R"(,"id":)" + std::to_string(i) +
              R"(,"children":[)";
    }
    for (int i = 1; i <= depth; ++i) text += "]}";
    return text + "]}}";
  };
  Result<Profile> p = DecodeHeapProfile(tree(true));
  REQUIRE_FALSE(p.ok());
  CHECK(p.status().code() == ErrorCode::kResourceExhausted);
  CHECK_THAT(p.status().message(), Catch::Matchers::Contains("32004000 frames in all (up to 8000 deep)"));

  Result<Profile> leaf = DecodeHeapProfile(tree(false));
  REQUIRE(leaf.ok());
  REQUIRE(leaf->samples.size() == 1);
  CHECK(leaf->samples[0].locations.size() == depth);
  CHECK(leaf->Total(kInuseSpace) == 64);
}

TEST_CASE("heapprofile export survives a very deep stack") {
  // One sample 300000 frames deep: exporting it as one nested Json and dumping
  // that recursed once per level and overflowed the stack.
  const uint32_t depth = 300000;
  Profile p;
  p.strings = {"", "inuse_space", "bytes", "deep", "d.js"};
  p.sample_types = {{StringId{1}, StringId{2}}};
  p.functions.push_back({FunctionId{1}, StringId{3}, StringId{0}, StringId{4}, 1});
  Sample sample;
  for (uint32_t i = 1; i <= depth; ++i) {
    p.locations.push_back({LocationId{i}, 0, {{FunctionId{1}, i, 1}}});
    sample.locations.push_back(LocationId{i});
  }
  sample.values = {7};
  p.samples.push_back(std::move(sample));
  REQUIRE(ValidateProfile(p).ok());

  Result<std::string> text = EncodeHeapProfile(p);
  REQUIRE(text.ok());
  Result<Profile> back = DecodeHeapProfile(*text);
  REQUIRE(back.ok());
  REQUIRE(back->samples.size() == 1);
  CHECK(back->samples[0].locations.size() == depth);
  CHECK(back->Total(kInuseSpace) == 7);
}

TEST_CASE("DevTools sampling profile: one RawSample per sample, scaled by BuildProfile like an embedded window") {
  // HeapProfiler.stopSampling's reply: (root) -> handle -> {retain, garbage}.
  const char* reply = R"json({"profile": {"head": {"callFrame": {"functionName": "(root)", "scriptId": "0", "url": "",
      "lineNumber": -1, "columnNumber": -1}, "selfSize": 0, "id": 1, "children": [
    {"callFrame": {"functionName": "handle", "scriptId": "3", "url": "file:///w.js", "lineNumber": 9, "columnNumber": 2},
     "selfSize": 0, "id": 2, "children": [
      {"callFrame": {"functionName": "retain", "scriptId": "3", "url": "file:///w.js", "lineNumber": 1, "columnNumber": 0},
       "selfSize": 999999, "id": 3, "children": []},
      {"callFrame": {"functionName": "", "scriptId": "3", "url": "file:///w.js", "lineNumber": 4, "columnNumber": 7},
       "selfSize": 999999, "id": 4, "children": []}]}]},
    "samples": [{"size": 5120, "nodeId": 3, "ordinal": 1}, {"size": 5120, "nodeId": 3, "ordinal": 2},
                {"size": 4160, "nodeId": 4, "ordinal": 3}, {"size": 4128, "nodeId": 99, "ordinal": 4}]}})json";
  // The sizes are V8's inspector's at a 4096-byte interval: object size x its
  // rounded count, 1024 x 5, 64 x 65 and 32 x 129.
  for (bool live : {false, true}) {
    SampledWindow window;
    window.live = live;
    window.allocated = !live;
    window.interval_bytes = 4096;
    Result<RawSnapshot> snap = DecodeSamplingProfile(reply, window);
    REQUIRE(snap.ok());
    REQUIRE(snap->samples.size() == 3);    // the orphan (node 99) is dropped and noted
    CHECK(snap->samples[0].size == 1024);  // object sizes again: BuildProfile scales once
    CHECK(snap->samples[2].size == 64);
    REQUIRE(snap->info.notes == std::vector<std::string>{"heapprofile_orphan_samples: 1"});
    snap->info.interval_bytes = 4096;
    Profile p = BuildProfile(snap.value());
    // selfSize is ignored: the values are BuildProfile's scaling of the object sizes.
    const int64_t expected =
        std::llround(2 * SampleScale(1024, 4096) * 1024) + std::llround(SampleScale(64, 4096) * 64);
    CHECK(p.Total(kAllocSpace) == (live ? 0 : expected));
    CHECK(p.Total(kInuseSpace) == (live ? expected : 0));
    std::set<std::string> names;
    for (const Function& f : p.functions) names.insert(std::string(p.str(f.name)));
    CHECK(names == std::set<std::string>{"handle", "retain", "(anonymous w.js:5:8)"});
  }
  SampledWindow at_4k;
  at_4k.interval_bytes = 4096;
  CHECK(DecodeSamplingProfile(R"({"profile": {"samples": []}})", at_4k).status().message().find("head") !=
        std::string::npos);
  CHECK_FALSE(DecodeSamplingProfile("not json", at_4k).ok());
  // Without the interval the sizes cannot be read.
  CHECK(DecodeSamplingProfile(reply, {}).status().message().find("interval") != std::string::npos);
}

TEST_CASE("the inspector's scaled sample sizes become object sizes whose bytes are V8's own estimate") {
  // 32, 40 and 80 bytes all read 32800 at 32 KiB: the smallest is taken.
  for (uint64_t size : {32u, 40u, 80u}) CHECK(size * InspectorSampleCount(size, 32768) == 32800);
  CHECK(InspectorObjectSize(32800, 32768) == 32);
  for (uint64_t interval : {4096u, 16384u, 32768u, 524288u}) {
    INFO("interval " << interval);
    for (uint64_t size = 8; size <= 3 * interval; size += size < 4096 ? 8 : 1000) {
      INFO("size " << size);
      const uint64_t value = size * InspectorSampleCount(size, interval);
      const uint64_t back = InspectorObjectSize(value, interval);
      // A size V8 maps to the same value, never a larger one than the truth.
      REQUIRE(back * InspectorSampleCount(back, interval) == value);
      REQUIRE(back <= size);
      // One object per sample (above 2.2 intervals) is exact.
      if (size > interval * 22 / 10 + 1) REQUIRE(back == size);
      // BuildProfile's bytes for it are V8's estimate within half an object,
      // not the ~1.58x of scaling the value a second time.
      const double bytes = static_cast<double>(back) * SampleScale(back, interval);
      REQUIRE(std::abs(bytes - static_cast<double>(value)) <= static_cast<double>(back) / 2 + 1e-6 * value);
    }
  }
  // A value no size makes (not V8's rounding) still gets a size with the bytes.
  const uint64_t odd = InspectorObjectSize(40000 + 7, 32768);
  CHECK(std::abs(static_cast<double>(odd) * SampleScale(odd, 32768) - 40007.0) < 0.6 * static_cast<double>(odd));
  CHECK(InspectorObjectSize(0, 32768) == 0);
  CHECK(InspectorObjectSize(1000, 32768) >= 1);  // below one interval: no size fits
}
