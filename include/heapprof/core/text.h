// Internal: small text utilities the core shares (paths, UTF-8, markup
// escaping, base64, the names heapprof gives anonymous functions), one
// implementation each instead of a private copy per file.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "heapprof/core/status.h"

namespace heapprof::internal {

// The last component of a slash-separated path or URL: "a/b/c.js" -> "c.js",
// "c.js" -> "c.js", "a/" -> "".
std::string_view BaseName(std::string_view path);

// How tables and generated names show a frame's file: its base name, except
// heapprof's own runtime scripts ("heapprof:..."), shown whole, so a frame of
// a bundled library says which package it is from
// ("heapprof:runtime-libraries/urlpattern-polyfill/dist/urlpattern.js").
std::string_view FileLabel(std::string_view filename);

// `name` usable as one file-name component: '/', '\\', '#', spaces and control
// characters become '-' (a replica's name as the stem of its profile file).
std::string FileSafeName(std::string name);

// The length of the well-formed UTF-8 sequence at text[i] (1 to 4), or 0 when
// it is not one: a stray continuation byte, an overlong form, a surrogate, a
// code point above U+10FFFF or a cut-off sequence. Strict, as protobuf
// requires of proto3 strings.
size_t Utf8SequenceLength(std::string_view text, size_t i);
// The scheme of a URL-like name: a letter, then letters, digits, '+', '-' or
// '.', before a ':' that comes before any '/' (RFC 3986): "https" of
// "https://x/y", "node" of "node:fs", "webpack" of "webpack:///a.ts"; "" for
// a path ("dist/a.js", "/srv/a:b.js").
std::string_view UrlScheme(std::string_view name);
// A file:// URL or a path, as a local path; "" for a URL of any other scheme.
std::string LocalPathOf(std::string_view location);

// Every byte of `text` belongs to a well-formed UTF-8 sequence.
bool IsValidUtf8(std::string_view text);
// `text` with each byte that starts no well-formed sequence replaced by U+FFFD
// and control characters other than tab and newline dropped.
std::string SanitizeUtf8(std::string_view text);

// Escapes &, <, >, " and ' for HTML or XML text and attribute values.
std::string EscapeMarkup(std::string_view text);

// RFC 4648 base64 with padding.
std::string Base64Encode(std::string_view bytes);
// Decodes base64 or base64url; whitespace is skipped and decoding stops at the
// first '='. kDataLoss names the offset of any other character.
// kStrict: only the base64 alphabet (A-Z a-z 0-9 + /), no whitespace, no '='
// (for callers that removed padding and whitespace by rules of their own).
enum class Base64Mode { kLenient, kStrict };
Result<std::string> Base64Decode(std::string_view text, Base64Mode mode = Base64Mode::kLenient);

// The name heapprof gives a function V8 reports without one, so that
// anonymous functions stay apart in pprof's tables: "(anonymous c.js:3:14)"
// (the script's FileLabel, the 1-based line and column).
std::string AnonymousFunctionName(std::string_view script, int line, int column);
// A name V8 left empty, or one AnonymousFunctionName (or V8's "(anonymous)") made.
bool IsAnonymousFunctionName(std::string_view name);

}  // namespace heapprof::internal
