// Who may use the debug endpoints: the token file (names, secrets, target
// patterns), a request's bearer token, and the targets a token may profile.
#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "heapprof/core/file_io.h"
#include "heapprof/core/text.h"
#include "heapprof/http/pprof_endpoints.h"
#include "heapprof/http/shown_text.h"

namespace heapprof {
namespace {

using internal::Shown;

// Compares secrets in time that does not depend on where they differ.
bool SameSecret(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

// The peer's address without its port ("127.0.0.1:5000" -> "127.0.0.1").
std::string AddressOf(const std::string& remote) {
  size_t colon = remote.rfind(':');
  return colon == std::string::npos ? remote : remote.substr(0, colon);
}

}  // namespace

bool TargetPatternMatches(std::string_view pattern, std::string_view name) {
  // Iterative glob with backtracking to the last '*'.
  size_t p = 0, n = 0, star = std::string_view::npos, mark = 0;
  while (n < name.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == name[n])) {
      ++p;
      ++n;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      mark = n;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      n = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

Result<std::vector<AccessToken>> ParseTokenFile(std::string_view text, std::string_view origin) {
  std::vector<AccessToken> tokens;
  size_t line_no = 0;
  while (!text.empty()) {
    size_t eol = text.find('\n');
    std::string_view line = text.substr(0, eol);
    text = eol == std::string_view::npos ? std::string_view() : text.substr(eol + 1);
    ++line_no;
    std::vector<std::string> words;
    size_t i = 0;
    while (i < line.size()) {
      while (i < line.size() && (line[i] == ' ' || line[i] == '\t' || line[i] == '\r')) ++i;
      size_t start = i;
      while (i < line.size() && line[i] != ' ' && line[i] != '\t' && line[i] != '\r') ++i;
      if (i > start) words.emplace_back(line.substr(start, i - start));
    }
    if (words.empty() || words.front().starts_with("#")) continue;
    auto bad = [&](const std::string& why) {
      return Error(ErrorCode::kInvalidArgument, fmt::format("{} line {}: {}", origin, line_no, why));
    };
    if (words.size() < 3) {
      return bad("expected NAME SECRET PATTERN [PATTERN...] (a pattern such as worker-1, worker-* or *)");
    }
    AccessToken token;
    token.name = words[0];
    token.secret = words[1];
    token.targets.assign(words.begin() + 2, words.end());
    if (token.secret.size() < kMinTokenSecretBytes) {
      return bad(
          fmt::format("the secret of {} is shorter than {} characters", Shown(token.name), kMinTokenSecretBytes));
    }
    for (unsigned char c : token.name + token.secret) {
      if (c < 0x21 || c > 0x7e) return bad("names and secrets are printable ASCII");
    }
    for (const AccessToken& other : tokens) {
      if (other.name == token.name) return bad(fmt::format("the name {} is used twice", Shown(token.name)));
      if (other.secret == token.secret)
        return bad(fmt::format("{} has the secret of {}", Shown(token.name), Shown(other.name)));
    }
    tokens.push_back(std::move(token));
  }
  if (tokens.empty()) return Error(ErrorCode::kInvalidArgument, fmt::format("{} has no tokens", origin));
  return tokens;
}

Result<std::vector<AccessToken>> ReadTokenFile(const std::string& path) {
  ReadOptions options;
  options.max_bytes = size_t{1} << 20;
  HEAPPROF_ASSIGN_OR_RETURN(std::string text, ReadFileBytes(path, options));
  return ParseTokenFile(text, path);
}

bool PprofEndpoints::Caller::May(std::string_view target) const {
  if (!token) return true;
  for (const std::string& pattern : token->targets) {
    if (TargetPatternMatches(pattern, target)) return true;
  }
  return false;
}

Result<PprofEndpoints::Caller> PprofEndpoints::Authenticate(const HttpRequest& request) const {
  Caller caller;
  if (options_.tokens.empty()) {
    caller.client = AddressOf(request.remote);
    return caller;
  }
  std::string_view auth = HeaderValue(request.headers, "authorization");
  constexpr std::string_view kBearer = "Bearer ";
  if (auth.size() > kBearer.size() && std::equal(kBearer.begin(), kBearer.end(), auth.begin(), [](char a, char b) {
        return std::tolower(static_cast<unsigned char>(a)) == std::tolower(static_cast<unsigned char>(b));
      })) {
    std::string_view secret = auth.substr(kBearer.size());
    for (const AccessToken& token : options_.tokens) {
      if (SameSecret(token.secret, secret)) {
        caller.token = &token;
        caller.client = token.name;
        return caller;
      }
    }
  }
  return Error(ErrorCode::kInvalidArgument,
               "the debug endpoints need a token: send 'Authorization: Bearer TOKEN' with one from --debug-token-file");
}

}  // namespace heapprof
