// The requests heapprof's worker runtime hands to a worker and what the worker
// answered: plain data, V8-free, so request files and reports are core code.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "heapprof/core/http_message.h"

namespace heapprof {

// One request handed to the worker.
struct WorkerRequest {
  std::string method = "GET";
  std::string url;
  HttpHeaders headers;
  std::string body;  // bytes; request.text() / request.json() / request.arrayBuffer(); empty for none
};

// What a handler answered: status, reason (response.statusText), headers
// (lower-case names, in Headers iteration order) and the body's bytes (a
// string body as UTF-8); the HTTP response heapprof's server sends as it is.
using WorkerResponse = HttpResponse;

}  // namespace heapprof
