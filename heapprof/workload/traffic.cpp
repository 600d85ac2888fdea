// Request files and flag-built requests, checked the way a Request
// constructor would check them, so a bad line fails here with its number
// instead of as a TypeError in every request of the run.
#include "heapprof/workload/traffic.h"
#include "heapprof/core/text.h"

#include <fmt/format.h>

#include <cstdint>

#include <nlohmann/json.hpp>

#include "heapprof/core/file_io.h"

namespace heapprof {
namespace {

using nlohmann::json;

bool IsToken(std::string_view s) {
  if (s.empty()) return false;
  for (unsigned char c : s) {
    if (std::isalnum(c) == 0 &&
        std::string_view("!#$%&'*+-.^_`|~").find(static_cast<char>(c)) == std::string_view::npos) {
      return false;
    }
  }
  return true;
}

// Why a request cannot be sent, or "" when it can.
std::string Check(const WorkerRequest& r) {
  if (!IsToken(r.method)) return fmt::format("the method {} is not an HTTP token", json(r.method).dump());
  const std::string_view scheme = internal::UrlScheme(r.url);
  if ((scheme != "http" && scheme != "https") || r.url.compare(scheme.size(), 3, "://") != 0) {
    return fmt::format("the url {} is not an absolute http:// or https:// URL", json(r.url).dump());
  }
  if (r.url.find_first_of(" \r\n\t") != std::string::npos) return "the url contains white space";
  for (const auto& [name, value] : r.headers) {
    if (!IsToken(name)) return fmt::format("the header name {} is not an HTTP token", json(name).dump());
    if (value.find_first_of("\r\n") != std::string::npos || value.find('\0') != std::string::npos) {
      return fmt::format("the value of header {} contains a line break or NUL", name);
    }
  }
  if ((r.method == "GET" || r.method == "HEAD") && !r.body.empty()) {
    return fmt::format("a {} request cannot have a body (the Request constructor refuses it)", r.method);
  }
  return {};
}

std::string String(const json& j, const char* what) {
  if (!j.is_string()) throw std::invalid_argument(fmt::format("{} must be a string", what));
  return j.get<std::string>();
}

WorkerRequest FromJsonLine(const json& j) {
  if (!j.is_object()) throw std::invalid_argument("each line must be a JSON object");
  WorkerRequest r;
  for (const auto& [key, value] : j.items()) {
    if (key == "method") {
      r.method = String(value, "method");
      for (char& c : r.method) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    } else if (key == "url") {
      r.url = String(value, "url");
    } else if (key == "body") {
      r.body = String(value, "body");
    } else if (key == "headers") {
      if (value.is_object()) {
        for (const auto& [name, v] : value.items()) r.headers.emplace_back(name, String(v, "a header value"));
      } else if (value.is_array()) {
        for (const json& pair : value) {
          if (!pair.is_array() || pair.size() != 2) throw std::invalid_argument("headers pairs must be [name, value]");
          r.headers.emplace_back(String(pair[0], "a header name"), String(pair[1], "a header value"));
        }
      } else {
        throw std::invalid_argument("headers must be an object or an array of [name, value] pairs");
      }
    } else {
      throw std::invalid_argument(
          fmt::format("unknown field {} (known: method, url, headers, body)", json(key).dump()));
    }
  }
  if (r.url.empty()) throw std::invalid_argument("url is missing");
  return r;
}

WorkerRequest FromHarEntry(const json& entry) {
  if (!entry.is_object() || !entry.contains("request") || !entry["request"].is_object()) {
    throw std::invalid_argument("an entry has no request object");
  }
  const json& req = entry["request"];
  WorkerRequest r;
  r.method = String(req.value("method", json("GET")), "request.method");
  r.url = String(req.value("url", json()), "request.url");
  if (req.contains("headers")) {
    if (!req["headers"].is_array()) throw std::invalid_argument("request.headers must be an array");
    for (const json& h : req["headers"]) {
      if (!h.is_object()) throw std::invalid_argument("each header must be an object with name and value");
      std::string name = String(h.value("name", json()), "a header's name");
      if (!name.empty() && name[0] == ':') continue;  // HTTP/2 pseudo-headers are not headers
      r.headers.emplace_back(std::move(name), String(h.value("value", json("")), "a header's value"));
    }
  }
  if (req.contains("postData") && req["postData"].is_object() && req["postData"].contains("text")) {
    r.body = String(req["postData"]["text"], "request.postData.text");
  }
  return r;
}

}  // namespace

std::string ResponseRecord(uint64_t index, const WorkerRequest& request, const Result<WorkerResponse>& response) {
  json line = {{"index", index}, {"method", request.method}, {"url", request.url}};
  if (!response.ok()) {
    line["error"] = response.status().message();
    return line.dump(-1, ' ', false, json::error_handler_t::replace);
  }
  line["status"] = response->status;
  json headers = json::array();
  for (const auto& [name, value] : response->headers) headers.push_back({name, value});
  line["headers"] = std::move(headers);
  line["body"] = response->body;
  try {
    return line.dump();
  } catch (const json::type_error&) {  // not UTF-8 (a header value could be Latin-1 too)
    line.erase("body");
    line["body_base64"] = internal::Base64Encode(response->body);
    return line.dump(-1, ' ', false, json::error_handler_t::replace);
  }
}

Result<std::vector<WorkerRequest>> ParseRequests(std::string_view text, std::string_view name) {
  std::vector<WorkerRequest> requests;
  size_t first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) {
    return Error(ErrorCode::kInvalidArgument, fmt::format("{}: no requests in the file", name));
  }
  // A HAR file is one JSON object with "log"; JSON lines have one object per line.
  json whole = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (whole.is_object() && whole.contains("log")) {
    const json& log = whole["log"];
    if (!log.is_object() || !log.contains("entries") || !log["entries"].is_array()) {
      return Error(ErrorCode::kInvalidArgument, fmt::format("{}: a HAR file needs log.entries (an array)", name));
    }
    size_t index = 0;
    for (const json& entry : log["entries"]) {
      ++index;
      try {
        requests.push_back(FromHarEntry(entry));
      } catch (const std::exception& e) {
        return Error(ErrorCode::kInvalidArgument, fmt::format("{}: HAR entry {}: {}", name, index, e.what()));
      }
      if (std::string why = Check(requests.back()); !why.empty()) {
        return Error(ErrorCode::kInvalidArgument, fmt::format("{}: HAR entry {}: {}", name, index, why));
      }
    }
  } else {
    size_t line_no = 0;
    size_t start = 0;
    while (start <= text.size()) {
      size_t end = text.find('\n', start);
      if (end == std::string_view::npos) end = text.size();
      std::string_view line = text.substr(start, end - start);
      ++line_no;
      start = end + 1;
      if (line.find_first_not_of(" \t\r") != std::string_view::npos) {
        json j = json::parse(line.begin(), line.end(), nullptr, /*allow_exceptions=*/false);
        if (j.is_discarded()) {
          return Error(ErrorCode::kInvalidArgument,
                       fmt::format("{}:{}: not a JSON object (a requests file has one JSON object per line, or is a "
                                   "HAR file)",
                                   name, line_no));
        }
        try {
          requests.push_back(FromJsonLine(j));
        } catch (const std::exception& e) {
          return Error(ErrorCode::kInvalidArgument, fmt::format("{}:{}: {}", name, line_no, e.what()));
        }
        if (std::string why = Check(requests.back()); !why.empty()) {
          return Error(ErrorCode::kInvalidArgument, fmt::format("{}:{}: {}", name, line_no, why));
        }
      }
      if (end == text.size()) break;
    }
  }
  if (requests.empty()) return Error(ErrorCode::kInvalidArgument, fmt::format("{}: no requests in the file", name));
  return requests;
}

Result<std::vector<WorkerRequest>> ReadRequestsFile(const std::string& path) {
  Result<std::string> text = ReadFileBytes(path);
  if (!text.ok()) return text.status();
  return ParseRequests(text.value(), path);
}

Result<WorkerRequest> MakeRequestFromFlags(const std::string& method, const std::string& url,
                                           const std::vector<std::string>& headers, const std::string& body) {
  WorkerRequest r;
  r.method = method;
  for (char& c : r.method) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  r.url = url;
  r.body = body;
  for (const std::string& h : headers) {
    size_t colon = h.find(':');
    if (colon == std::string::npos) {
      return Error(ErrorCode::kInvalidArgument, fmt::format("--header {}: expected \"Name: value\"", json(h).dump()));
    }
    std::string value = h.substr(colon + 1);
    value.erase(0, value.find_first_not_of(" \t"));
    r.headers.emplace_back(h.substr(0, colon), value);
  }
  if (std::string why = Check(r); !why.empty()) return Error(ErrorCode::kInvalidArgument, why);
  return r;
}

}  // namespace heapprof
