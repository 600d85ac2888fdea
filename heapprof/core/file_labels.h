// Internal: how every table, stack line, diff and flamegraph names a file:
// by the shortest suffix of whole path components that no other file of the
// same profile (or pair of profiles) shares, so `index.js` stays `index.js`
// when it is the only one and becomes `@trpc/server/dist/index.js` beside
// `hono/dist/index.js`.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "heapprof/core/profile.h"

namespace heapprof::internal {

class FileLabels {
 public:
  FileLabels() = default;
  // The files of every function of the profiles.
  static FileLabels Of(const std::vector<const Profile*>& profiles);
  static FileLabels Of(const Profile& profile) { return Of(std::vector<const Profile*>{&profile}); }
  // Any list of file names (duplicates allowed).
  static FileLabels Of(const std::vector<std::string_view>& files);

  // The label of a file given to Of; a file it was not given gets its base
  // name (or its whole name for heapprof's runtime scripts), as before.
  // heapprof's own scripts ("heapprof:runtime...") are always shown whole.
  std::string Label(std::string_view file) const;
  // A function's name as shown beside its file: the "(anonymous c.js:3:14)"
  // names heapprof gives anonymous functions carry the file's label too.
  std::string FunctionName(std::string_view name, std::string_view file) const;

 private:
  std::unordered_map<std::string, std::string> labels_;
};

}  // namespace heapprof::internal
