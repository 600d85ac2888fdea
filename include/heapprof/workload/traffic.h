// The user's own traffic for `heapprof run`: request files (JSON lines or a
// HAR file as browsers export them) and one request built from flags. V8-free;
// every malformed input is an error naming the file and line, never a crash.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "heapprof/core/status.h"
#include "heapprof/workload/worker_messages.h"

namespace heapprof {

// The index-th request of heapprof's deterministic synthetic stream: a mix of
// API, static and search routes with varying ids, countries and user agents,
// so workers can key state by URL or by a label set.
WorkerRequest SyntheticRequest(uint64_t index);

// Parses a requests file's text. JSON lines: one object per line,
// {"method": "POST", "url": "https://...", "headers": {"name": "value"} or
// [["name", "value"], ...], "body": "text"}; only url is required; blank lines
// are skipped. HAR (a JSON object with log.entries): each entry's request
// (method, url, headers without HTTP/2 pseudo-headers, postData.text).
// `name` prefixes messages ("requests.jsonl:3: ..."). At least one request.
Result<std::vector<WorkerRequest>> ParseRequests(std::string_view text, std::string_view name);

// Reads and parses a requests file.
Result<std::vector<WorkerRequest>> ReadRequestsFile(const std::string& path);

// One request from --method, --url, --header "Name: value" (repeatable) and --body.
Result<WorkerRequest> MakeRequestFromFlags(const std::string& method, const std::string& url,
                                           const std::vector<std::string>& headers, const std::string& body);

// One line of `heapprof run --responses-out` (no newline): what the worker
// answered the index-th request, {"index", "method", "url", "status",
// "headers": [[name, value], ...] in Headers iteration order, "body"} with
// "body_base64" instead of "body" when the body is not UTF-8; or, for a
// request that threw, rejected or timed out, {"index", "method", "url", "error"}.
std::string ResponseRecord(uint64_t index, const WorkerRequest& request, const Result<WorkerResponse>& response);

}  // namespace heapprof
