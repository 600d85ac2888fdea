#include "heapprof/core/profile_tables.h"

#include <functional>
#include <string>

#include "heapprof/core/profile_builder.h"

namespace heapprof::internal {

StringInterner::StringInterner(Profile& p, size_t expected_new)
    : profile_(p), index_(p.strings.size() + expected_new, Hash{&p}, Equal{&p}) {
  for (size_t i = 0; i < p.strings.size(); ++i) index_.insert(static_cast<uint32_t>(i));
}

StringId StringInterner::operator()(std::string_view s) {
  auto it = index_.find(s);
  if (it != index_.end()) return StringId{*it};
  StringId id = profile_.AddString(std::string(s));
  index_.insert(static_cast<uint32_t>(id));
  return id;
}

size_t StringInterner::Hash::operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
size_t StringInterner::Hash::operator()(uint32_t id) const { return (*this)(std::string_view(p->strings[id])); }

bool StringInterner::Equal::operator()(uint32_t a, uint32_t b) const {
  return a == b || p->strings[a] == p->strings[b];
}
bool StringInterner::Equal::operator()(std::string_view a, uint32_t b) const { return a == p->strings[b]; }
bool StringInterner::Equal::operator()(uint32_t a, std::string_view b) const { return p->strings[a] == b; }

LocationId LocationTable::Of(const Frame& frame) {
  const int64_t line = frame.line;
  StringId name = strings_(FrameDisplayName(frame));
  StringId file = strings_(frame.script_name);
  auto fit = functions_.find({name, file, line});
  if (fit == functions_.end()) {
    FunctionId id{static_cast<uint32_t>(profile_.functions.size() + 1)};
    profile_.functions.push_back(Function{id, name, StringId{0}, file, line});
    fit = functions_.emplace(std::make_tuple(name, file, line), id).first;
  }
  auto lit = locations_.find({fit->second, line, int64_t{frame.column}});
  if (lit == locations_.end()) {
    LocationId id{static_cast<uint32_t>(profile_.locations.size() + 1)};
    profile_.locations.push_back(Location{id, 0, {Line{fit->second, line, frame.column}}});
    lit = locations_.emplace(std::make_tuple(fit->second, line, int64_t{frame.column}), id).first;
  }
  return lit->second;
}

}  // namespace heapprof::internal
