// heapprof's synthetic request stream: deterministic, varied enough that a
// worker keying state by URL or by a label set sees the cardinality real
// traffic has (ids keep growing, a few countries and agents repeat).
#include <cstdint>
#include <string>

#include "heapprof/workload/traffic.h"

namespace heapprof {
namespace {

constexpr const char* kCountries[] = {"US", "DE", "GB", "FR", "JP", "BR", "IN", "CA", "AU", "NL", "SG", "ZA"};
constexpr const char* kColos[] = {"IAD", "FRA", "LHR", "CDG", "NRT", "GRU", "BOM", "YYZ", "SYD", "AMS"};
constexpr const char* kAgents[] = {
    "Mozilla/5.0 (X11; Linux x86_64) Gecko/20100101 Firefox/120.0",
    "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_1) AppleWebKit/605.1.15 Safari/605.1.15",
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 Chrome/119.0 Safari/537.36",
    "curl/8.4.0",
    "okhttp/4.12.0",
};
constexpr const char* kSearchTerms[] = {"red shoes", "laptop",        "coffee grinder", "usb-c cable",
                                        "tent",      "running watch", "desk lamp"};

// A cheap, well-mixed hash so consecutive indexes look unrelated.
uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

template <size_t N>
const char* Pick(const char* const (&items)[N], uint64_t h) {
  return items[h % N];
}

std::string UrlEncode(std::string_view s) {
  std::string out;
  for (char c : s) out += c == ' ' ? std::string("+") : std::string(1, c);
  return out;
}

}  // namespace

WorkerRequest SyntheticRequest(uint64_t index) {
  uint64_t h = Mix(index);
  WorkerRequest r;
  const std::string origin = "https://shop.example.com";
  // Ids grow with the index, so id-bearing paths are (almost) never repeated.
  uint64_t user = 1000 + index * 7 + (h >> 40) % 7;
  switch (h % 10) {
    case 0:
    case 1:
    case 2:
      r.url = origin + "/api/users/" + std::to_string(user);
      break;
    case 3:
    case 4:
      r.url = origin + "/api/orders/" + std::to_string(50000 + index) + "?include=items";
      break;
    case 5:
      r.method = "POST";
      r.url = origin + "/api/orders";
      r.body = "{\"user\":" + std::to_string(user) + ",\"items\":[{\"sku\":\"SKU-" + std::to_string(h % 5000) +
               "\",\"qty\":" + std::to_string(1 + (h >> 8) % 4) + "}]}";
      r.headers.emplace_back("content-type", "application/json");
      break;
    case 6:
    case 7:
      r.url = origin + "/api/search?q=" + UrlEncode(Pick(kSearchTerms, h >> 12)) +
              "&page=" + std::to_string(1 + (h >> 20) % 5);
      break;
    case 8:
      r.url = origin + "/static/app." + std::to_string((h >> 16) % 3) + ".js";
      break;
    default:
      r.url = origin + "/health";
      break;
  }
  r.headers.emplace_back("host", "shop.example.com");
  r.headers.emplace_back("user-agent", Pick(kAgents, h >> 24));
  r.headers.emplace_back("accept", "application/json");
  r.headers.emplace_back("cf-ipcountry", Pick(kCountries, h >> 32));
  r.headers.emplace_back("cf-ray", std::to_string(h % 100000000000ull) + "-" + Pick(kColos, h >> 36));
  r.headers.emplace_back("x-request-id", "req-" + std::to_string(index));
  return r;
}

}  // namespace heapprof
