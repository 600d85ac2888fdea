// Request files (JSON lines, HAR) and flag-built requests: parsed as given,
// and every malformed input an error naming its line.
#include <catch2/catch.hpp>

#include "heapprof/workload/traffic.h"

using namespace heapprof;

TEST_CASE("traffic: JSON lines with every field, defaults and blank lines") {
  auto r = ParseRequests(
      "{\"url\": \"https://example.com/a\"}\n"
      "\n"
      "{\"method\": \"post\", \"url\": \"https://example.com/b\", \"headers\": {\"Content-Type\": "
      "\"application/json\"},"
      " \"body\": \"{\\\"x\\\":1}\"}\r\n"
      "{\"url\": \"http://localhost:8787/c?q=1\", \"headers\": [[\"set-cookie\", \"a=1\"], [\"set-cookie\", \"b=2\"]]}",
      "reqs.jsonl");
  REQUIRE(r.ok());
  REQUIRE(r->size() == 3);
  CHECK((*r)[0].method == "GET");
  CHECK((*r)[0].url == "https://example.com/a");
  CHECK((*r)[1].method == "POST");
  CHECK((*r)[1].body == "{\"x\":1}");
  CHECK((*r)[1].headers == std::vector<std::pair<std::string, std::string>>{{"Content-Type", "application/json"}});
  CHECK((*r)[2].headers.size() == 2);
}

TEST_CASE("traffic: a HAR file's requests, without HTTP/2 pseudo-headers") {
  auto r = ParseRequests(R"({"log": {"version": "1.2", "entries": [
      {"request": {"method": "GET", "url": "https://shop.example/api/items?page=2",
                   "headers": [{"name": ":authority", "value": "shop.example"}, {"name": "accept", "value": "*/*"}]},
       "response": {"status": 200}},
      {"request": {"method": "POST", "url": "https://shop.example/api/cart", "headers": [],
                   "postData": {"mimeType": "application/json", "text": "{\"id\":7}"}}}]}})",
                         "session.har");
  REQUIRE(r.ok());
  REQUIRE(r->size() == 2);
  CHECK((*r)[0].headers == std::vector<std::pair<std::string, std::string>>{{"accept", "*/*"}});
  CHECK((*r)[1].method == "POST");
  CHECK((*r)[1].body == "{\"id\":7}");
}

TEST_CASE("traffic: malformed files are errors with the file and line") {
  auto message = [](std::string_view text) { return ParseRequests(text, "r.jsonl").status().message(); };
  CHECK(message("") == "r.jsonl: no requests in the file");
  CHECK(message("{\"url\":\"https://a.example/\"}\n{oops") ==
        "r.jsonl:2: not a JSON object (a requests file has one JSON object per line, or is a HAR file)");
  CHECK(message("[1,2]") == "r.jsonl:1: each line must be a JSON object");
  CHECK(message("{\"method\":\"GET\"}") == "r.jsonl:1: url is missing");
  CHECK(message("{\"url\":\"/relative\"}") ==
        "r.jsonl:1: the url \"/relative\" is not an absolute http:// or https:// URL");
  CHECK(message("{\"url\":\"https://a.example/\",\"body\":\"x\"}") ==
        "r.jsonl:1: a GET request cannot have a body (the Request constructor refuses it)");
  CHECK(message("{\"url\":\"https://a.example/\",\"headers\":{\"bad name\":\"v\"}}") ==
        "r.jsonl:1: the header name \"bad name\" is not an HTTP token");
  CHECK(message("{\"url\":\"https://a.example/\",\"headers\":{\"x\":\"a\\r\\nb: c\"}}") ==
        "r.jsonl:1: the value of header x contains a line break or NUL");
  CHECK(message("{\"url\":\"https://a.example/\",\"extra\":1}") ==
        "r.jsonl:1: unknown field \"extra\" (known: method, url, headers, body)");
  CHECK(message("{\"url\":5}") == "r.jsonl:1: url must be a string");
  CHECK(message("{\"log\": {}}") == "r.jsonl: a HAR file needs log.entries (an array)");
  CHECK(message("{\"log\": {\"entries\": [{\"request\": {\"url\": \"ftp://x\"}}]}}") ==
        "r.jsonl: HAR entry 1: the url \"ftp://x\" is not an absolute http:// or https:// URL");
  CHECK(message("{\"log\": {\"entries\": []}}") == "r.jsonl: no requests in the file");
}

TEST_CASE("traffic: one request from flags") {
  auto r =
      MakeRequestFromFlags("put", "https://api.example/v1/items/3", {"Content-Type: application/json", "X-A:b"}, "{}");
  REQUIRE(r.ok());
  CHECK(r->method == "PUT");
  CHECK(r->headers ==
        std::vector<std::pair<std::string, std::string>>{{"Content-Type", "application/json"}, {"X-A", "b"}});
  CHECK(MakeRequestFromFlags("GET", "https://a.example/", {"no-colon"}, "").status().message() ==
        "--header \"no-colon\": expected \"Name: value\"");
  CHECK_FALSE(MakeRequestFromFlags("GET", "example.com", {}, "").ok());
}

TEST_CASE("traffic: a --responses-out line holds status, headers and body, base64 when not UTF-8, or the error") {
  WorkerRequest request;
  request.method = "POST";
  request.url = "https://example.com/api";
  WorkerResponse response;
  response.status = 201;
  response.headers = {{"content-type", "application/json"}, {"set-cookie", "a=1"}, {"set-cookie", "b=2"}};
  response.body = "{\"ok\":true,\"name\":\"Zo\xc3\xab\"}";
  CHECK(ResponseRecord(3, request, response) ==
        "{\"body\":\"{\\\"ok\\\":true,\\\"name\\\":\\\"Zo\xc3\xab\\\"}\",\"headers\":[[\"content-type\",\"application/"
        "json\"],"
        "[\"set-cookie\",\"a=1\"],[\"set-cookie\",\"b=2\"]],\"index\":3,\"method\":\"POST\",\"status\":201,"
        "\"url\":\"https://example.com/api\"}");
  response.headers.clear();
  response.body = std::string("\x89PNG\r\n\x1a\n\x00", 9);
  CHECK(ResponseRecord(0, request, response) ==
        "{\"body_base64\":\"iVBORw0KGgoA\",\"headers\":[],\"index\":0,\"method\":\"POST\",\"status\":201,"
        "\"url\":\"https://example.com/api\"}");
  response.body = "ab";  // padding
  CHECK(ResponseRecord(0, request, response).find("\"body\":\"ab\"") != std::string::npos);
  response.body = "\xff\xfe\xfd\xfc";
  CHECK(ResponseRecord(0, request, response).find("\"body_base64\":\"//79/A==\"") != std::string::npos);
  Result<WorkerResponse> failed = Error(ErrorCode::kScriptError, "POST https://example.com/api: Error: boom");
  CHECK(ResponseRecord(7, request, failed) ==
        "{\"error\":\"POST https://example.com/api: Error: boom\",\"index\":7,\"method\":\"POST\","
        "\"url\":\"https://example.com/api\"}");
}
