// Counting request outcomes and writing the report after a run.
#include "heapprof/workload/outcomes.h"

#include <fmt/format.h>

#include <algorithm>
#include <regex>

namespace heapprof {
namespace {

// Distinct messages remembered for counting; beyond it new ones count as distinct without memory.
constexpr size_t kMaxRemembered = 1000;

const char* KindName(RequestFailure kind) {
  switch (kind) {
    case RequestFailure::kThrown:
      return "threw";
    case RequestFailure::kRejected:
      return "rejected";
    case RequestFailure::kTimedOut:
      return "timed out";
  }
  return "?";
}

std::string Percent(uint64_t part, uint64_t whole) {
  if (whole == 0) return "0 %";
  double p = 100.0 * static_cast<double>(part) / static_cast<double>(whole);
  return p >= 10 || p == 0 ? fmt::format("{:.0f} %", p) : fmt::format("{:.1f} %", p);
}

}  // namespace

void RequestOutcomes::AddResponse(int status) {
  ++responses_;
  ++statuses_[status];
}

uint64_t RequestOutcomes::server_errors() const {
  uint64_t n = 0;
  for (auto it = statuses_.lower_bound(500); it != statuses_.end() && it->first <= 599; ++it) n += it->second;
  return n;
}

void RequestOutcomes::AddFailure(RequestFailure kind, std::string_view description) {
  switch (kind) {
    case RequestFailure::kThrown:
      ++thrown_;
      break;
    case RequestFailure::kRejected:
      ++rejected_;
      break;
    case RequestFailure::kTimedOut:
      ++timed_out_;
      break;
  }
  size_t newline = description.find('\n');
  std::string message(description.substr(0, newline));
  for (DistinctError& e : errors_) {
    if (e.message == message && e.kind == kind) {
      ++e.count;
      return;
    }
  }
  if (seen_.count(message) != 0) return;
  ++distinct_total_;
  if (seen_.size() < kMaxRemembered) seen_.insert(message);
  if (errors_.size() >= kMaxDistinct) return;
  DistinctError e;
  e.message = std::move(message);
  if (newline != std::string_view::npos) e.stack = std::string(description.substr(newline + 1));
  e.kind = kind;
  e.count = 1;
  e.first_request = requests();
  errors_.push_back(std::move(e));
}

void RequestOutcomes::Merge(const RequestOutcomes& other) {
  for (const auto& [status, n] : other.statuses_) statuses_[status] += n;
  responses_ += other.responses_;
  thrown_ += other.thrown_;
  rejected_ += other.rejected_;
  timed_out_ += other.timed_out_;
  console_errors_ += other.console_errors_;
  uint64_t shared = 0;
  for (const DistinctError& e : other.errors_) {
    auto same = std::find_if(errors_.begin(), errors_.end(), [&](const DistinctError& mine) {
      return mine.message == e.message && mine.kind == e.kind;
    });
    if (same != errors_.end()) {
      same->count += e.count;
      ++shared;
    } else if (errors_.size() < kMaxDistinct) {
      errors_.push_back(e);
    }
  }
  // Errors both replicas saw beyond the kept ones are counted twice: a bound, said as "of N" in the report.
  distinct_total_ = std::max<uint64_t>(distinct_total_ + other.distinct_total_ - shared, errors_.size());
}

std::string SymbolizeStack(std::string_view stack, SourceMapProvider& maps) {
  // "    at name (file:line:col)" or "    at file:line:col"
  static const std::regex kFrame(R"(^(\s*at (?:(.*) \()?)(.+?):(\d+):(\d+)(\)?)\s*$)");
  std::string out;
  size_t start = 0;
  while (start <= stack.size()) {
    size_t end = stack.find('\n', start);
    if (end == std::string_view::npos) end = stack.size();
    std::string line(stack.substr(start, end - start));
    std::smatch m;
    if (std::regex_match(line, m, kFrame)) {
      Result<const SourceMap*> map = maps.MapFor(m[3].str());
      int64_t line_no = std::stoll(m[4].str().substr(0, 12));
      int64_t column = std::stoll(m[5].str().substr(0, 12));
      if (map.ok() && map.value() != nullptr) {
        if (auto pos = map.value()->Lookup(line_no, column); pos && pos->source < map.value()->sources().size()) {
          line = fmt::format("{}{}:{}:{}{}", m[1].str(), map.value()->sources()[pos->source], pos->line, pos->column,
                             m[6].str());
        }
      }
    }
    out += line;
    if (end == stack.size()) break;
    out += '\n';
    start = end + 1;
  }
  return out;
}

std::string FormatOutcomes(const RequestOutcomes& o, SourceMapProvider* maps) {
  std::string statuses;
  for (const auto& [status, n] : o.statuses()) {
    statuses += fmt::format("{}{} x{}", statuses.empty() ? "" : ", ", status, n);
  }
  std::string out =
      fmt::format("Requests: {}; responses by status: {}", o.requests(), statuses.empty() ? "none" : statuses);
  std::vector<std::string> failures;
  if (o.thrown() > 0) failures.push_back(fmt::format("{} threw", o.thrown()));
  if (o.rejected() > 0) failures.push_back(fmt::format("{} rejected", o.rejected()));
  if (o.timed_out() > 0) failures.push_back(fmt::format("{} timed out", o.timed_out()));
  if (o.server_errors() > 0) failures.push_back(fmt::format("{} answered 5xx", o.server_errors()));
  if (failures.empty()) {
    out += "; no request failed";
  } else {
    out += fmt::format("; failed: {} request{} ({})", o.failed(), o.failed() == 1 ? "" : "s",
                       Percent(o.failed(), o.requests()));
    for (size_t i = 0; i < failures.size(); ++i) out += (i == 0 ? " — " : ", ") + failures[i];
  }
  if (o.console_errors() > 0) {
    out += fmt::format("; console.error calls: {}", o.console_errors());
  }
  out += "\n";
  if (!o.errors().empty()) {
    out += o.distinct_errors() > o.errors().size()
               ? fmt::format("The first {} of {} distinct errors:\n", o.errors().size(), o.distinct_errors())
               : std::string(o.errors().size() == 1 ? "The error:\n" : "The distinct errors:\n");
    for (const DistinctError& e : o.errors()) {
      out +=
          fmt::format("  {} x{} (first at request #{}): {}\n", KindName(e.kind), e.count, e.first_request, e.message);
      if (!e.stack.empty()) {
        std::string stack = maps != nullptr ? SymbolizeStack(e.stack, *maps) : e.stack;
        size_t start = 0;
        int lines = 0;
        while (start < stack.size() && lines < 8) {
          size_t end = stack.find('\n', start);
          if (end == std::string::npos) end = stack.size();
          out += "    " + stack.substr(start, end - start) + "\n";
          start = end + 1;
          ++lines;
        }
      }
    }
  }
  return out;
}

FailureVerdict JudgeFailures(const RequestOutcomes& o, double max_share) {
  FailureVerdict verdict;
  if (o.requests() == 0) return verdict;
  double share = static_cast<double>(o.failed()) / static_cast<double>(o.requests());
  if (share <= max_share) return verdict;
  verdict.too_many = true;
  std::vector<std::string> why;
  if (o.thrown() > 0) why.push_back(fmt::format("{} threw", o.thrown()));
  if (o.rejected() > 0) why.push_back(fmt::format("{} rejected", o.rejected()));
  if (o.timed_out() > 0) why.push_back(fmt::format("{} timed out", o.timed_out()));
  if (o.server_errors() > 0) why.push_back(fmt::format("{} answered 5xx", o.server_errors()));
  std::string reasons;
  for (size_t i = 0; i < why.size(); ++i) reasons += (i == 0 ? "" : ", ") + why[i];
  verdict.message = fmt::format("{} of {} requests failed ({}), above the limit of {} (--max-failures)",
                                Percent(o.failed(), o.requests()), o.requests(), reasons,
                                Percent(static_cast<uint64_t>(max_share * 1000 + 0.5), 1000));
  if (!o.errors().empty()) verdict.message += "; first error: " + o.errors().front().message;
  return verdict;
}

}  // namespace heapprof
