// The natives of the request path's checks of HTTP text, which workerd does
// in C++: a regular expression that runs on every request is compiled by V8
// to native code that then stays on the worker's heap (kilobytes a pattern).
#include <string>
#include <string_view>

#include "heapprof/runtime/native_callbacks.h"
#include "heapprof/runtime/worker_natives.h"

namespace heapprof::internal {
namespace {

bool IsLowerHostChar(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '-'; }

// Printable ASCII that no encode set of the URL parser touches in a path
// (the query's set differs: it keeps ? ` { } \ and encodes ').
bool IsPlainPathChar(unsigned char c, bool query) {
  if (c <= 0x20 || c >= 0x7f || c == '"' || c == '#' || c == '<' || c == '>') return false;
  if (query) return c != '\'';
  return c != '?' && c != '`' && c != '{' && c != '}' && c != '\\';
}

// "." or "%2e" (either case) at `at`: its length, or 0.
size_t DotAt(std::string_view text, size_t at) {
  if (at < text.size() && text[at] == '.') return 1;
  if (at + 2 < text.size() && text[at] == '%' && text[at + 1] == '2' && (text[at + 2] | 0x20) == 'e') return 3;
  return 0;
}

bool EndsSegment(std::string_view text, size_t at) { return at == text.size() || text[at] == '/' || text[at] == '?'; }

// A dot segment (one or two dots, either spelled %2e) after any '/', in the
// path or the query: a false alarm there only costs the full parse.
bool HasDotSegment(std::string_view text) {
  for (size_t slash = text.find('/'); slash != std::string_view::npos; slash = text.find('/', slash + 1)) {
    size_t first = DotAt(text, slash + 1);
    if (first == 0) continue;
    if (EndsSegment(text, slash + 1 + first)) return true;
    size_t second = DotAt(text, slash + 1 + first);
    if (second != 0 && EndsSegment(text, slash + 1 + first + second)) return true;
  }
  return false;
}

// A host of [a-z0-9.-] the URL parser gives back as it is: labels not
// empty, none punycode (xn--, which the parser checks), and either not ending
// in a number (the parser reads such a host as IPv4: 127.1 is 127.0.0.1,
// a.1 is an error) or a dotted quad already in its serialized form.
bool IsNormalDomain(std::string_view host) {
  if (host.empty()) return false;
  std::string_view last;
  size_t labels = 0;
  bool quad = true;
  for (size_t start = 0; start <= host.size();) {
    size_t end = host.find('.', start);
    if (end == std::string_view::npos) end = host.size();
    const std::string_view label = host.substr(start, end - start);
    if (label.empty() || label.substr(0, 4) == "xn--") return false;
    const bool decimal = label.find_first_not_of("0123456789") == std::string_view::npos;
    quad = quad && decimal && label.size() <= 3 && (label.size() == 1 || label[0] != '0') &&
           std::stoi(std::string(label)) <= 255;
    last = label;
    labels++;
    start = end + 1;
  }
  const bool ends_in_number = last.find_first_not_of("0123456789") == std::string_view::npos ||
                              (last.size() >= 2 && last[0] == '0' && last[1] == 'x');
  return !ends_in_number || (labels == 4 && quad);
}

// The digits after "host:" the parser keeps: no leading zero, at most 65535,
// not the scheme's default (which it drops, as it drops an empty port).
bool IsNormalPort(std::string_view digits, std::string_view default_port) {
  if (digits.empty() || digits.size() > 5 || digits[0] == '0' || digits == default_port) return false;
  return std::stoi(std::string(digits)) <= 65535;
}

}  // namespace

bool IsNormalHttpHref(std::string_view text) {
  size_t at;
  std::string_view default_port;
  if (text.substr(0, 8) == "https://") {
    at = 8, default_port = "443";
  } else if (text.substr(0, 7) == "http://") {
    at = 7, default_port = "80";
  } else {
    return false;
  }
  const size_t host = at;
  while (at < text.size() && IsLowerHostChar(text[at])) at++;
  if (!IsNormalDomain(text.substr(host, at - host))) return false;
  if (at < text.size() && text[at] == ':') {
    const size_t port = ++at;
    while (at < text.size() && text[at] >= '0' && text[at] <= '9') at++;
    if (!IsNormalPort(text.substr(port, at - port), default_port)) return false;
  }
  if (at == text.size() || text[at] != '/') return false;
  bool query = false;
  for (; at < text.size(); at++) {
    if (!query && text[at] == '?') {
      query = true;
    } else if (!IsPlainPathChar(static_cast<unsigned char>(text[at]), query)) {
      return false;
    }
  }
  return !HasDotSegment(text);
}

// isNormalHref(text): whether text (a string) is an http(s) URL that its
// parse would give back unchanged as href (IsNormalHttpHref).
void IsNormalHref(const v8::FunctionCallbackInfo<v8::Value>& info) {
  v8::Isolate* isolate = info.GetIsolate();
  if (!info[0]->IsString()) {
    ThrowTypeError(isolate, "isNormalHref(text)");
    return;
  }
  v8::Local<v8::String> text = info[0].As<v8::String>();
  // Anything beyond Latin-1 is not ASCII, so not normal.
  bool normal = false;
  if (text->ContainsOnlyOneByte()) {
    std::string bytes(static_cast<size_t>(text->Length()), '\0');
    text->WriteOneByte(isolate, reinterpret_cast<uint8_t*>(bytes.data()), 0, static_cast<int>(bytes.size()),
                       v8::String::NO_NULL_TERMINATION);
    normal = IsNormalHttpHref(bytes);
  }
  info.GetReturnValue().Set(normal);
}

}  // namespace heapprof::internal
