// The requests heapprof's worker runtime hands to a worker and what the worker
// answered: plain data, V8-free, so request files and reports are core code.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace heapprof {

// One request handed to the worker.
struct WorkerRequest {
  std::string method = "GET";
  std::string url;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;  // bytes; request.text() / request.json() / request.arrayBuffer(); empty for none
};

// What a handler answered.
struct WorkerResponse {
  int status = 200;  // response.status
  std::string status_text;
  std::vector<std::pair<std::string, std::string>> headers;  // lower-case names, in Headers iteration order
  std::string body;                                          // the body's bytes (a string body as UTF-8)
};

}  // namespace heapprof
