#include "heapprof/core/file_labels.h"

#include <set>

#include "heapprof/core/text.h"

namespace heapprof::internal {
namespace {

// The '/'-separated components of a name, empty ones dropped.
std::vector<std::string_view> Components(std::string_view file) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (start <= file.size()) {
    size_t slash = file.find('/', start);
    if (slash == std::string_view::npos) slash = file.size();
    if (slash > start) parts.push_back(file.substr(start, slash - start));
    start = slash + 1;
  }
  return parts;
}

// The last k components of `file`, as written in it.
std::string_view Suffix(std::string_view file, const std::vector<std::string_view>& parts, size_t k) {
  const char* begin = parts[parts.size() - k].data();
  return file.substr(static_cast<size_t>(begin - file.data()));
}

bool Whole(std::string_view file) { return file.starts_with("heapprof:"); }

// The label a file has whatever else is in the profile, or "": a project's
// own file as the project names it ("./src/index.ts", as a project bundle's
// map names it, is src/index.ts), but not a package's (./node_modules/...).
std::string_view OwnLabel(std::string_view file) {
  if (!file.starts_with("./") || file.size() <= 2 || file.starts_with("./node_modules/")) return {};
  return file.substr(2);
}

}  // namespace

FileLabels FileLabels::Of(const std::vector<const Profile*>& profiles) {
  std::vector<std::string_view> files;
  for (const Profile* p : profiles) {
    for (const Function& f : p->functions) files.push_back(p->str(f.filename));
  }
  return Of(files);
}

FileLabels FileLabels::Of(const std::vector<std::string_view>& all) {
  std::set<std::string_view> files(all.begin(), all.end());
  files.erase(std::string_view());
  // How many distinct files end with each suffix of whole components:
  // heapprof's own scripts count too (they are shown whole, but a user's
  // `url.js` beside `heapprof:runtime/url.js` would read as either).
  std::unordered_map<std::string_view, size_t> count;
  for (std::string_view file : files) {
    std::vector<std::string_view> parts = Components(file);
    for (size_t k = 1; k <= parts.size(); ++k) ++count[Suffix(file, parts, k)];
  }
  FileLabels labels;
  for (std::string_view file : files) {
    std::string label(file);
    if (std::string_view own = OwnLabel(file); !own.empty()) {
      label = std::string(own);
    } else if (!Whole(file)) {
      std::vector<std::string_view> parts = Components(file);
      for (size_t k = 1; k <= parts.size(); ++k) {
        if (parts[parts.size() - k] == ".." || parts[parts.size() - k] == ".") break;  // no label starts above a folder
        if (count[Suffix(file, parts, k)] != 1) continue;
        // A scoped npm package is named with its scope: @trpc/server/..., not server/...
        if (k < parts.size() && parts[parts.size() - k - 1].starts_with('@')) ++k;
        label = std::string(Suffix(file, parts, k));
        break;
      }
    }
    labels.labels_.emplace(std::string(file), std::move(label));
  }
  return labels;
}

std::string FileLabels::Label(std::string_view file) const {
  auto it = labels_.find(std::string(file));
  if (it != labels_.end()) return it->second;
  return std::string(FileLabel(file));
}

std::string FileLabels::FunctionName(std::string_view name, std::string_view file) const {
  // "(anonymous BASE:line:col)", as AnonymousFunctionName writes it.
  std::string prefix = "(anonymous " + std::string(FileLabel(file)) + ":";
  if (file.empty() || !name.starts_with(prefix)) return std::string(name);
  std::string label = Label(file);
  if (label == FileLabel(file)) return std::string(name);
  return "(anonymous " + label + ":" + std::string(name.substr(prefix.size()));
}

}  // namespace heapprof::internal
