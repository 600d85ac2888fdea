// Finding a script's source map (its `//# sourceMappingURL=` comment, an
// inline `data:` URL, FILE.map beside the script, or folders of maps the user
// names) and handing each map out parsed once.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "heapprof/core/source_map.h"
#include "heapprof/core/status.h"

namespace heapprof {

// The URL of the last line-leading `//# sourceMappingURL=` (or legacy `//@`)
// comment in a script, if any.
std::optional<std::string> FindSourceMappingUrl(std::string_view script_text);

// The payload of a `data:` URL (base64 or percent-encoded), e.g. an inline map's JSON.
Result<std::string> DecodeDataUrl(std::string_view url);

// A script name as a local path ("file:///a/b.js" -> "/a/b.js"); "" for
// other URLs (node:fs, https://...) and for names that are not paths.
std::string ScriptPath(std::string_view script_name);

// Where maps are looked for, in this order: the folders, the script's
// comment (inline or a file relative to the script), SCRIPT.map beside it.
//
// What may be read (docs/security.md): a script, and a map file, only when its
// real path (symbolic links resolved) lies in the tree of one of `roots` or
// `map_dirs`, and only regular files (no FIFO, device or /proc entry). A
// sourceMappingURL naming anything else is refused with a message that quotes
// nothing read; names in an untrusted profile cannot steer a read elsewhere.
struct SourceMapSearch {
  // DIR/<basename of the comment's URL> and DIR/<script basename>.map.
  std::vector<std::string> map_dirs;
  // Folders whose whole trees scripts and maps may be read from: the
  // worker's folder and the user's --source-map-path folders. Empty: none.
  std::vector<std::string> roots;
  bool read_scripts = true;   // read the script to find its comment
  bool beside_script = true;  // try SCRIPT.map next to the script
};

// Scripts and map files larger than this are not read.
inline constexpr size_t kMaxSourceFileBytes = size_t{256} << 20;  // 256 MiB

// A map found for a script, not parsed yet.
struct LocatedMap {
  std::string json;
  std::string location;  // the map file, or the script for an inline map (resolves `sources`)
  std::string origin;    // for messages: the map's path or "inline map in SCRIPT"
};

// Finds one script's map: nullopt when it has none (or the script lies
// outside the allowed folders), an error when a map is named but cannot be
// used (missing file, outside the allowed folders, undecodable data: URL, remote URL).
Result<std::optional<LocatedMap>> LocateSourceMap(std::string_view script_name, const SourceMapSearch& search);

// Hands out the source map of a script as a profile names it.
class SourceMapProvider {
 public:
  virtual ~SourceMapProvider() = default;
  // nullptr when the script has no map; an error (the reason a warning
  // gives) when its map exists but is unusable. Stable for the provider's life.
  virtual Result<const SourceMap*> MapFor(std::string_view script) = 0;
  // How many seconds the script's map file is older than the script (after
  // MapFor found it), when both are files: a bundle rebuilt without its map.
  // nullopt when unknown, for an inline map, or when the map is not older by
  // more than 5 s (a build writes the two moments apart).
  virtual std::optional<double> MapOlderThanScript(std::string_view /*script*/) { return std::nullopt; }
};

// Finds maps on disk with LocateSourceMap; parses each script's map once
// (and a map file shared by several scripts once), remembering failures.
class FileSourceMapProvider final : public SourceMapProvider {
 public:
  explicit FileSourceMapProvider(SourceMapSearch search = {});
  ~FileSourceMapProvider() override;
  Result<const SourceMap*> MapFor(std::string_view script) override;
  std::optional<double> MapOlderThanScript(std::string_view script) override;
  // How many times a map was parsed so far (each map at most once).
  size_t maps_parsed() const { return parses_; }

 private:
  SourceMapSearch search_;
  size_t parses_ = 0;
  std::vector<std::unique_ptr<SourceMap>> maps_;
  std::unordered_map<std::string, Result<const SourceMap*>> by_script_;
  std::unordered_map<std::string, Result<const SourceMap*>> by_location_;
  std::unordered_map<std::string, double> older_by_;  // script -> seconds its map file is older
};

}  // namespace heapprof
