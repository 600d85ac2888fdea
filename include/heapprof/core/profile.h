// The V8-free profile model: a pprof-shaped, interned, validated profile.
// Built from a RawSnapshot (profile_builder.h), read from pprof files
// (pprof.h), and consumed by every encoder and tool. Never sees a V8 type.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace heapprof {

// Index into Profile::strings; StringId{0} is always the empty string.
enum class StringId : uint32_t {};
// 1-based id of a Function: Profile::functions[id - 1].
enum class FunctionId : uint32_t {};
// 1-based id of a Location: Profile::locations[id - 1].
enum class LocationId : uint32_t {};

// Positions of the four heap sample types in every heapprof profile
// (Go's heap profile order).
enum SampleIndex : int { kAllocObjects = 0, kAllocSpace = 1, kInuseObjects = 2, kInuseSpace = 3 };

struct ValueType {
  StringId type{};
  StringId unit{};
};

struct Label {
  StringId key{};
  StringId str{};       // string label value, or 0
  int64_t num = 0;      // numeric label value when str is 0
  StringId num_unit{};  // unit of num, or 0
};

struct Function {
  FunctionId id{};
  StringId name{};         // readable name (original name after symbolization)
  StringId system_name{};  // generated name when it differs, else 0
  StringId filename{};     // script URL or name; empty for VM-state frames
  int64_t start_line = 0;  // 1-based, 0 = unknown
};

struct Line {
  FunctionId function{};
  int64_t line = 0;    // 1-based; for V8 frames the function's start line
  int64_t column = 0;  // 1-based, 0 = unknown
};

struct Location {
  LocationId id{};
  uint64_t address = 0;
  std::vector<Line> lines;  // innermost first; heapprof writes exactly one
};

struct Sample {
  std::vector<LocationId> locations;  // leaf first
  std::vector<int64_t> values;        // one per Profile::sample_types
  std::vector<Label> labels;
};

// A whole profile. Ids are dense: functions[i].id == i + 1, same for locations.
struct Profile {
  std::vector<std::string> strings{""};
  std::vector<ValueType> sample_types;
  std::vector<Sample> samples;
  std::vector<Location> locations;
  std::vector<Function> functions;
  std::vector<StringId> comments;
  int64_t time_nanos = 0;
  int64_t duration_nanos = 0;
  ValueType period_type;
  int64_t period = 0;
  StringId default_sample_type{};

  std::string_view str(StringId id) const { return strings.at(static_cast<uint32_t>(id)); }
  const Function& function(FunctionId id) const { return functions.at(static_cast<uint32_t>(id) - 1); }
  const Location& location(LocationId id) const { return locations.at(static_cast<uint32_t>(id) - 1); }

  // Adds a string (no de-duplication; use ProfileStrings for interning).
  StringId AddString(std::string s);
  // Index of the sample type named `type` ("alloc_space"...), or -1.
  int FindSampleType(std::string_view type) const;
  // Sum of one sample type over all samples.
  int64_t Total(int sample_index) const;
  // The value of the numeric label `key` of a sample, or `fallback`.
  int64_t NumLabel(const Sample& sample, std::string_view key, int64_t fallback = 0) const;
  // The text of every comment, in order.
  std::vector<std::string> CommentTexts() const;
  // Value of the comment "key: value", or empty when absent.
  std::string CommentValue(std::string_view key) const;
  // Display name of a location's innermost function ("" for none).
  std::string_view FunctionName(LocationId id) const;
};

}  // namespace heapprof
