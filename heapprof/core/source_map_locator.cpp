#include "heapprof/core/source_map_locator.h"

#include <fmt/format.h>
#include <algorithm>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <system_error>

#include "heapprof/core/file_io.h"
#include "heapprof/core/text.h"

namespace heapprof {
namespace {

constexpr std::string_view kUrlKey = "sourceMappingURL=";

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

bool IsFile(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_regular_file(path, ec);
}

// The folders a search may read from, each as its real absolute path.
std::vector<std::filesystem::path> AllowedTrees(const SourceMapSearch& search) {
  std::vector<std::filesystem::path> trees;
  for (const auto* list : {&search.roots, &search.map_dirs}) {
    for (const std::string& dir : *list) {
      std::error_code ec;
      std::filesystem::path real = std::filesystem::canonical(dir, ec);
      if (!ec) trees.push_back(std::move(real));
    }
  }
  return trees;
}

// True when `path`, links resolved, is in one of the trees.
bool InTrees(const std::string& path, const std::vector<std::filesystem::path>& trees) {
  std::error_code ec;
  std::filesystem::path real = std::filesystem::weakly_canonical(std::filesystem::absolute(path, ec), ec);
  if (ec) return false;
  for (const std::filesystem::path& tree : trees) {
    auto [t, r] = std::mismatch(tree.begin(), tree.end(), real.begin(), real.end());
    if (t == tree.end()) return true;
  }
  return false;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

Result<std::string> PercentDecode(std::string_view in) {
  std::string out;
  out.reserve(in.size());
  for (size_t i = 0; i < in.size(); ++i) {
    if (in[i] != '%') {
      out.push_back(in[i]);
      continue;
    }
    int hi = i + 2 < in.size() ? HexValue(in[i + 1]) : -1;
    int lo = i + 2 < in.size() ? HexValue(in[i + 2]) : -1;
    if (hi < 0 || lo < 0) return Error(ErrorCode::kDataLoss, fmt::format("bad percent escape at offset {}", i));
    out.push_back(static_cast<char>(hi * 16 + lo));
    i += 2;
  }
  return out;
}

// Scripts and maps: regular files only, opened without blocking, capped.
Result<std::string> ReadSourceFile(const std::string& path) {
  return ReadFileBytes(path, {.max_bytes = kMaxSourceFileBytes, .regular_only = true});
}

Result<LocatedMap> ReadMapFile(const std::string& path, std::string_view script_name) {
  Result<std::string> bytes = ReadSourceFile(path);
  if (!bytes.ok()) {
    return Error(bytes.status().code(),
                 fmt::format("source map {} of {} cannot be read: {}", path, script_name, bytes.status().message()));
  }
  return LocatedMap{std::move(bytes).value(), path, path};
}

}  // namespace

std::optional<std::string> FindSourceMappingUrl(std::string_view text) {
  size_t pos = text.size();
  while (pos > 0) {
    size_t key = text.rfind(kUrlKey, pos - 1);
    if (key == std::string_view::npos) return std::nullopt;
    pos = key;
    // Only a comment that starts its line counts: "//# sourceMappingURL=" or "//@ ...".
    if (key < 4) continue;
    std::string_view marker = text.substr(key - 4, 4);
    if (marker != "//# " && marker != "//@ ") continue;
    size_t line_start = key - 4;
    while (line_start > 0 && (text[line_start - 1] == ' ' || text[line_start - 1] == '\t')) --line_start;
    if (line_start > 0 && text[line_start - 1] != '\n' && text[line_start - 1] != '\r') continue;
    size_t begin = key + kUrlKey.size();
    size_t end = begin;
    while (end < text.size() && !IsSpace(text[end])) ++end;
    if (end == begin) continue;
    return std::string(text.substr(begin, end - begin));
  }
  return std::nullopt;
}

Result<std::string> DecodeDataUrl(std::string_view url) {
  if (url.substr(0, 5) != "data:") return Error(ErrorCode::kInvalidArgument, "not a data: URL");
  size_t comma = url.find(',');
  if (comma == std::string_view::npos) return Error(ErrorCode::kDataLoss, "data: URL without a ','");
  std::string_view meta = url.substr(5, comma - 5);
  std::string_view payload = url.substr(comma + 1);
  bool base64 = meta.size() >= 7 && meta.substr(meta.size() - 7) == ";base64";
  Result<std::string> decoded = base64 ? internal::Base64Decode(payload) : PercentDecode(payload);
  if (!decoded.ok()) return Error(ErrorCode::kDataLoss, fmt::format("bad data: URL: {}", decoded.status().message()));
  return decoded;
}

std::string ScriptPath(std::string_view script_name) {
  // A URL of any other scheme than file:// (https://, node:internal/fs, data:) is not a local file.
  std::string path = internal::LocalPathOf(script_name);
  if (path.empty() || script_name.starts_with("file://")) return path;
  // "node:fs", "evalmachine.<anonymous>" and other names without a slash are not files.
  if (script_name.find('/') == std::string_view::npos && !IsFile(std::string(script_name))) return {};
  return std::string(script_name);
}

namespace {

// A script named relative to the worker's main module ("worker.js",
// "lib/util.js", as workerd names modules and the embedded runtime too) is
// the file of that name in the first of the search's roots that has it: the
// worker's folder comes first.
std::string ResolveScript(std::string_view script_name, const SourceMapSearch& search) {
  if (!script_name.empty() && script_name.front() != '/' && internal::UrlScheme(script_name).empty()) {
    for (const std::string& root : search.roots) {
      std::string candidate = (std::filesystem::path(root) / std::string(script_name)).lexically_normal().string();
      if (IsFile(candidate)) return candidate;
    }
  }
  return ScriptPath(script_name);
}

}  // namespace

Result<std::optional<LocatedMap>> LocateSourceMap(std::string_view script_name, const SourceMapSearch& search) {
  using Found = std::optional<LocatedMap>;
  const std::string script = ResolveScript(script_name, search);
  std::string_view base = internal::BaseName(script.empty() ? script_name : std::string_view(script));

  const std::vector<std::filesystem::path> trees = AllowedTrees(search);
  const bool script_readable = !script.empty() && InTrees(script, trees);

  std::optional<std::string> url;
  if (search.read_scripts && script_readable && IsFile(script)) {
    Result<std::string> text = ReadSourceFile(script);
    if (text.ok()) url = FindSourceMappingUrl(text.value());
  }
  if (url && url->substr(0, 5) == "data:") {
    Result<std::string> json = DecodeDataUrl(*url);
    if (!json.ok()) {
      return Error(ErrorCode::kDataLoss,
                   fmt::format("inline source map of {}: {}", script_name, json.status().message()));
    }
    return Found(LocatedMap{std::move(json).value(), script, fmt::format("inline map in {}", script)});
  }

  for (const std::string& dir : search.map_dirs) {
    std::vector<std::string> candidates;
    if (url) candidates.push_back((std::filesystem::path(dir) / std::string(internal::BaseName(*url))).string());
    if (!base.empty()) candidates.push_back((std::filesystem::path(dir) / (std::string(base) + ".map")).string());
    for (const std::string& c : candidates) {
      if (!IsFile(c) || !InTrees(c, trees)) continue;  // a link out of the folder is not followed
      HEAPPROF_ASSIGN_OR_RETURN(LocatedMap m, ReadMapFile(c, script_name));
      return Found(std::move(m));
    }
  }

  if (url) {
    std::string target = *url;
    if (target.substr(0, 7) == "file://") target.erase(0, 7);
    if (target.find("://") != std::string::npos) {
      return Error(ErrorCode::kNotFound,
                   fmt::format("{} names a remote source map; put it in a --maps folder", script_name));
    }
    size_t cut = target.find_first_of("?#");
    if (cut != std::string::npos) target.resize(cut);
    Result<std::string> decoded = PercentDecode(target);
    if (decoded.ok()) target = std::move(decoded).value();
    std::filesystem::path p(target);
    if (p.is_relative()) p = std::filesystem::path(script).parent_path() / p;
    std::string path = p.lexically_normal().string();
    if (!InTrees(path, trees)) {
      // Neither the URL nor anything at it is quoted: the script may be hostile.
      return Error(ErrorCode::kInvalidArgument,
                   fmt::format("the sourceMappingURL of {} names a file outside the folders heapprof reads maps "
                               "from (the worker's folder, --source-map-path, --maps); not read",
                               script_name));
    }
    HEAPPROF_ASSIGN_OR_RETURN(LocatedMap m, ReadMapFile(path, script_name));
    return Found(std::move(m));
  }

  if (search.beside_script && script_readable && IsFile(script + ".map") && InTrees(script + ".map", trees)) {
    HEAPPROF_ASSIGN_OR_RETURN(LocatedMap m, ReadMapFile(script + ".map", script_name));
    return Found(std::move(m));
  }
  return Found();
}

std::optional<double> FileSourceMapProvider::MapOlderThanScript(std::string_view script) {
  auto it = older_by_.find(std::string(script));
  if (it == older_by_.end()) return std::nullopt;
  return it->second;
}

FileSourceMapProvider::FileSourceMapProvider(SourceMapSearch search) : search_(std::move(search)) {}
FileSourceMapProvider::~FileSourceMapProvider() = default;

Result<const SourceMap*> FileSourceMapProvider::MapFor(std::string_view script) {
  std::string key(script);
  if (auto it = by_script_.find(key); it != by_script_.end()) return it->second;

  auto remember = [&](Result<const SourceMap*> r) {
    by_script_.insert_or_assign(key, r);
    return r;
  };
  Result<std::optional<LocatedMap>> located = LocateSourceMap(script, search_);
  if (!located.ok()) return remember(located.status());
  if (!located.value()) return remember(static_cast<const SourceMap*>(nullptr));
  LocatedMap& m = *located.value();
  // A map file older than its script: written by an earlier build.
  if (const std::string path = ResolveScript(script, search_); m.location != path && !path.empty()) {
    std::error_code e1, e2;
    auto script_time = std::filesystem::last_write_time(path, e1);
    auto map_time = std::filesystem::last_write_time(m.location, e2);
    // A build writes the map and the script moments apart, in either order:
    // only a map older by more than a few seconds is from another build.
    if (!e1 && !e2 && script_time - map_time > std::chrono::seconds(5)) {
      older_by_[key] = std::chrono::duration<double>(script_time - map_time).count();
    }
  }

  // Inline maps are keyed by their script; map files by path, so scripts
  // sharing one map parse it once.
  std::string location_key = m.origin;
  if (auto it = by_location_.find(location_key); it != by_location_.end()) return remember(it->second);

  ++parses_;
  Result<SourceMap> parsed = SourceMap::Parse(m.json, m.location);
  Result<const SourceMap*> r = static_cast<const SourceMap*>(nullptr);
  if (!parsed.ok()) {
    r = Status(ErrorCode::kDataLoss, fmt::format("source map {}: {}", m.origin, parsed.status().message()));
  } else {
    maps_.push_back(std::make_unique<SourceMap>(std::move(parsed).value()));
    r = maps_.back().get();
  }
  by_location_.insert_or_assign(location_key, r);
  return remember(r);
}

}  // namespace heapprof
