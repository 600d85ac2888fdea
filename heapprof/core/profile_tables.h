// Internal: the interning every producer of a Profile shares (the builder of
// V8 snapshots, the .heapprofile importer, the symbolizer): one string
// interner, and one table of functions and locations keyed by frame.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string_view>
#include <tuple>
#include <unordered_set>

#include "heapprof/core/profile.h"
#include "heapprof/core/raw_snapshot.h"

namespace heapprof::internal {

// Interns strings into a profile's string table, reusing the strings it
// already holds (index 0 stays ""). The index holds string ids and hashes the
// profile's own strings, so no string is copied to look it up.
class StringInterner {
 public:
  // `expected_new`: how many strings the caller may add, to size the index once.
  explicit StringInterner(Profile& p, size_t expected_new = 0);
  StringId operator()(std::string_view s);

 private:
  struct Hash {
    using is_transparent = void;
    const Profile* p;
    size_t operator()(std::string_view s) const;
    size_t operator()(uint32_t id) const;
  };
  struct Equal {
    using is_transparent = void;
    const Profile* p;
    bool operator()(uint32_t a, uint32_t b) const;
    bool operator()(std::string_view a, uint32_t b) const;
    bool operator()(uint32_t a, std::string_view b) const;
  };
  Profile& profile_;
  std::unordered_set<uint32_t, Hash, Equal> index_;
};

// The functions and locations of a profile, one per distinct frame: a
// function per (display name, file, start line), what a reader tells apart
// (FrameDisplayName names anonymous ones); a location per (function, line,
// column). Ids count from 1 in order of first use.
class LocationTable {
 public:
  LocationTable(Profile& p, StringInterner& strings) : profile_(p), strings_(strings) {}
  LocationId Of(const Frame& frame);

 private:
  Profile& profile_;
  StringInterner& strings_;
  std::map<std::tuple<StringId, StringId, int64_t>, FunctionId> functions_;
  std::map<std::tuple<FunctionId, int64_t, int64_t>, LocationId> locations_;
};

}  // namespace heapprof::internal
