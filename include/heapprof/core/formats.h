// Every profile format heapprof reads or writes, behind one entry point each
// way: what `heapprof convert` and the other tools call.
#pragma once

#include <string>
#include <string_view>

#include "heapprof/core/profile.h"
#include "heapprof/core/status.h"

namespace heapprof {

enum class ProfileFormat {
  kPprof,        // profile.proto, gzipped on disk (.pb.gz)
  kHeapProfile,  // Chrome DevTools .heapprofile JSON
  kFolded,       // folded stacks text, write-only
};

// "pprof", "heapprofile" or "folded".
std::string_view FormatName(ProfileFormat format);
// Parses a format name as FormatName spells it (also accepts "pb", "pb.gz", "json", "collapsed").
Result<ProfileFormat> ParseProfileFormat(std::string_view name);
// The format a file name asks for: .heapprofile / .json -> kHeapProfile,
// .folded / .collapsed / .txt -> kFolded, anything else -> kPprof.
ProfileFormat FormatForPath(std::string_view path);

// Reads pprof (gzipped or raw) or .heapprofile JSON (raw or gzipped), by content.
Result<Profile> DecodeProfile(std::string_view bytes);
Result<Profile> ReadProfileFile(const std::string& path);

struct EncodeOptions {
  // For .heapprofile and folded output, which carry one sample type: by name
  // or index; empty = the profile's default. pprof always carries all types.
  std::string sample_type;
  // Folded output only: append " (file:line)" to frames.
  bool with_filenames = false;
};

Result<std::string> EncodeProfile(const Profile& profile, ProfileFormat format, const EncodeOptions& options = {});
// Encodes and writes atomically (temp file + rename).
Status WriteProfileFile(const std::string& path, const Profile& profile, ProfileFormat format,
                        const EncodeOptions& options = {});

}  // namespace heapprof
