// Internal: the fast path of SourceMap::Parse. A JSON scanner that finds the
// two big values of a regular source map in its text, so that the VLQ
// decoder reads "mappings" in place and nlohmann-json parses only the rest.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace heapprof::internal {

// Where the two big values of a regular map sit in its text. nlohmann's
// lexer copies input a character at a time (about 120 ms for a 5 MB map), so
// "mappings" (pure base64) and "sourcesContent" (needed only on demand) are
// cut out and the small rest goes to nlohmann.
struct BigValues {
  std::string reduced;             // the map with both values replaced by null
  std::string_view mappings;       // the mappings string's text between the quotes
  bool mappings_escaped = false;   // it holds a backslash: let nlohmann unescape it
  std::string_view mappings_json;  // the whole string token, quotes included
  std::string_view contents_json;  // the sourcesContent array's text, or empty
};

// Splits a regular map's top-level object; nullopt for index maps and for
// anything odd, which then takes the plain nlohmann path.
std::optional<BigValues> FindBigValues(std::string_view text);

}  // namespace heapprof::internal
