#include "heapprof/core/formats.h"

#include <fmt/format.h>

#include "heapprof/core/file_io.h"
#include "heapprof/core/folded.h"
#include "heapprof/core/gzip.h"
#include "heapprof/core/heapprofile.h"
#include "heapprof/core/pprof.h"

namespace heapprof {
namespace {

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

bool LooksLikeJson(std::string_view bytes) {
  size_t first = bytes.find_first_not_of(" \t\r\n");
  // A UTF-8 byte order mark may precede the JSON.
  if (first != std::string_view::npos && bytes.substr(first, 3) == "\xEF\xBB\xBF") {
    first = bytes.find_first_not_of(" \t\r\n", first + 3);
  }
  return first != std::string_view::npos && bytes[first] == '{';
}

}  // namespace

std::string_view FormatName(ProfileFormat format) {
  switch (format) {
    case ProfileFormat::kPprof:
      return "pprof";
    case ProfileFormat::kHeapProfile:
      return "heapprofile";
    case ProfileFormat::kFolded:
      return "folded";
  }
  return "unknown";
}

Result<ProfileFormat> ParseProfileFormat(std::string_view name) {
  if (name == "pprof" || name == "pb" || name == "pb.gz" || name == "proto") return ProfileFormat::kPprof;
  if (name == "heapprofile" || name == "json" || name == "chrome") return ProfileFormat::kHeapProfile;
  if (name == "folded" || name == "collapsed") return ProfileFormat::kFolded;
  return Error(ErrorCode::kInvalidArgument,
               fmt::format("unknown profile format \"{}\"; expected pprof, heapprofile or folded", name));
}

ProfileFormat FormatForPath(std::string_view path) {
  if (EndsWith(path, ".heapprofile") || EndsWith(path, ".json")) return ProfileFormat::kHeapProfile;
  if (EndsWith(path, ".folded") || EndsWith(path, ".collapsed") || EndsWith(path, ".txt")) {
    return ProfileFormat::kFolded;
  }
  return ProfileFormat::kPprof;
}

Result<Profile> DecodeProfile(std::string_view bytes) {
  if (bytes.empty()) return Error(ErrorCode::kDataLoss, "input is empty (0 bytes)");
  std::string inflated;
  std::string_view content = bytes;
  if (IsGzip(bytes)) {
    HEAPPROF_ASSIGN_OR_RETURN(std::string raw, GzipDecompress(bytes));
    inflated = std::move(raw);
    content = inflated;
  }
  if (LooksLikeJson(content)) return DecodeHeapProfile(content);
  return DecodePprof(content);
}

Result<Profile> ReadProfileFile(const std::string& path) {
  HEAPPROF_ASSIGN_OR_RETURN(std::string bytes, ReadFileBytes(path));
  Result<Profile> profile = DecodeProfile(bytes);
  if (!profile.ok()) return Error(profile.status().code(), fmt::format("{}: {}", path, profile.status().message()));
  return profile;
}

Result<std::string> EncodeProfile(const Profile& profile, ProfileFormat format, const EncodeOptions& options) {
  switch (format) {
    case ProfileFormat::kPprof:
      return EncodePprofGzip(profile);
    case ProfileFormat::kHeapProfile:
      return EncodeHeapProfile(profile, {options.sample_type});
    case ProfileFormat::kFolded:
      return EncodeFolded(profile, {options.sample_type, options.with_filenames});
  }
  return Error(ErrorCode::kInvalidArgument, "unknown profile format");
}

Status WriteProfileFile(const std::string& path, const Profile& profile, ProfileFormat format,
                        const EncodeOptions& options) {
  HEAPPROF_ASSIGN_OR_RETURN(std::string bytes, EncodeProfile(profile, format, options));
  return WriteFileAtomic(path, bytes);
}

}  // namespace heapprof
