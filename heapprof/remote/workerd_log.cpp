// Uncaught exceptions from workerd's --verbose log (workerd_log.h).
#include "heapprof/remote/workerd_log.h"

#include <algorithm>

namespace heapprof::remote {

std::vector<WorkerdException> ParseWorkerdExceptions(std::string_view log) {
  static constexpr std::string_view kMarker = "uncaught exception; source = ";
  std::vector<WorkerdException> out;
  WorkerdException* open = nullptr;  // the entry whose stack lines follow
  size_t start = 0;
  while (start < log.size()) {
    size_t end = log.find('\n', start);
    if (end == std::string_view::npos) end = log.size();
    std::string_view line = log.substr(start, end - start);
    start = end + 1;
    if (open != nullptr && line.starts_with("    at ")) {
      open->description += "\n";
      open->description += line;
      continue;
    }
    open = nullptr;
    size_t marker = line.find(kMarker);
    if (marker == std::string_view::npos) continue;
    std::string_view rest = line.substr(marker + kMarker.size());
    size_t semi = rest.find("; ");
    if (semi == std::string_view::npos) continue;
    std::string_view source = rest.substr(0, semi);
    rest = rest.substr(semi + 2);
    for (std::string_view field : {std::string_view("stack = "), std::string_view("exception = ")}) {
      if (!rest.starts_with(field)) continue;
      WorkerdException e;
      e.rejected = source.find("in promise") != std::string_view::npos;
      e.description = std::string(rest.substr(field.size()));
      // workerd's "internal error; reference = <id>" differs in every request: one error, not many.
      if (size_t ref = e.description.find("; reference = "); ref != std::string::npos) e.description.resize(ref);
      if (field == "exception = ") e.description = "Uncaught " + e.description;  // a thrown value that is not an Error
      out.push_back(std::move(e));
      open = &out.back();
      break;
    }
  }
  return out;
}

std::vector<std::string> UnexportedDurableObjectClasses(std::string_view log) {
  static constexpr std::string_view kBefore = "referenced the class \"";
  static constexpr std::string_view kAfter = "\", but no such Durable Object class is exported";
  std::vector<std::string> out;
  for (size_t at = log.find(kBefore); at != std::string_view::npos; at = log.find(kBefore, at + 1)) {
    const size_t name = at + kBefore.size();
    const size_t end = log.find(kAfter, name);
    const size_t line_end = log.find('\n', name);
    if (end == std::string_view::npos || end > line_end) continue;
    std::string cls(log.substr(name, end - name));
    if (std::find(out.begin(), out.end(), cls) == out.end()) out.push_back(std::move(cls));
  }
  return out;
}

std::string WithModulePath(std::string_view description, std::string_view module, std::string_view path) {
  // Frames read "    at f (worker.js:1:39)" or "    at worker.js:1:39".
  std::string out;
  size_t start = 0;
  while (start <= description.size()) {
    size_t end = description.find('\n', start);
    if (end == std::string_view::npos) end = description.size();
    std::string line(description.substr(start, end - start));
    if (line.starts_with("    at ")) {
      for (const std::string& before :
           {std::string("(") + std::string(module) + ":", std::string("at ") + std::string(module) + ":"}) {
        size_t at = line.find(before);
        if (at != std::string::npos) {
          line.replace(at + before.size() - module.size() - 1, module.size(), path);
          break;
        }
      }
    }
    out += line;
    if (end == description.size()) break;
    out += '\n';
    start = end + 1;
  }
  return out;
}

}  // namespace heapprof::remote
