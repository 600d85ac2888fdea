// Allocation matchers: measure with the profile queries, and on failure turn
// the profile into evidence a reader can act on (stacks, bytes, a file).
#include "heapprof/testing/matchers.h"

#include <fmt/format.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <system_error>
#include <utility>

#include "heapprof/core/pprof.h"
#include "heapprof/core/report.h"

namespace heapprof::testing {
namespace {

// The running Catch2 test's name, or "" outside a test run.
std::string CurrentTestName() {
  Catch::IResultCapture* capture = Catch::getCurrentContext().getResultCapture();
  return capture != nullptr ? capture->getCurrentTestName() : std::string();
}

// A file-name-safe version of a test name.
std::string Slug(std::string_view name) {
  std::string out;
  for (char c : name) {
    bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
    if (keep) {
      out += c;
    } else if (!out.empty() && out.back() != '_') {
      out += '_';
    }
    if (out.size() >= 80) break;
  }
  while (!out.empty() && out.back() == '_') out.pop_back();
  return out.empty() ? "heapprof_test" : out;
}

// Writes the profile of a failed assertion; returns its path or why it could not.
Result<std::string> SaveFailedProfile(const Profile& profile) {
  static std::atomic<int> counter{0};
  std::filesystem::path dir = TestOutputDirectory();
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Error(ErrorCode::kIo, fmt::format("cannot create {}: {}", dir.string(), ec.message()));
  std::string name = fmt::format("{}.{}.pb.gz", Slug(CurrentTestName()), ++counter);
  std::filesystem::path path = std::filesystem::absolute(dir / name, ec).lexically_normal();
  if (ec) path = dir / name;
  Status written = WritePprofFile(path.string(), profile);
  if (!written.ok()) return written;
  return path.string();
}

const char* Verb(AllocationMatcher::Measure m) {
  return m == AllocationMatcher::Measure::kRetained ? "retains" : "allocates";
}

}  // namespace

std::string TestOutputDirectory() {
  const char* dir = std::getenv("HEAPPROF_TEST_OUTPUT");
  return dir != nullptr && *dir != '\0' ? std::string(dir) : std::string(".");
}

AllocationMatcher::AllocationMatcher(Measure measure, int64_t limit_bytes) : measure_(measure), limit_(limit_bytes) {}

AllocationMatcher AllocationMatcher::From(std::string function_regex) const {
  AllocationMatcher copy = *this;
  copy.filter_.function = std::move(function_regex);
  return copy;
}

AllocationMatcher AllocationMatcher::InScript(std::string script_regex) const {
  AllocationMatcher copy = *this;
  copy.filter_.script = std::move(script_regex);
  return copy;
}

AllocationMatcher AllocationMatcher::Where(FrameFilter filter) const {
  AllocationMatcher copy = *this;
  copy.filter_ = std::move(filter);
  return copy;
}

AllocationMatcher AllocationMatcher::ShowingStacks(size_t n) const {
  AllocationMatcher copy = *this;
  copy.stacks_ = n;
  return copy;
}

bool AllocationMatcher::match(const Profile& profile) const {
  evidence_.clear();
  saved_path_.clear();
  measured_ = 0;
  const char* type = measure_ == Measure::kRetained ? "inuse_space" : "alloc_space";
  int index = profile.FindSampleType(type);
  if (index < 0) {
    evidence_ = fmt::format("the profile has no {} sample type", type);
    return false;
  }
  auto matcher = FrameMatcher::Compile(filter_);
  if (!matcher.ok()) {
    evidence_ = matcher.status().message();
    return false;
  }
  measured_ = TotalForFrames(profile, matcher.value(), index).cum;
  if (measured_ < limit_) return true;

  bool everything = filter_.function.empty() && filter_.script.empty();
  auto stacks = TopStacks(profile, index, stacks_, everything ? nullptr : &matcher.value());
  evidence_ = fmt::format("but {} {} ({} bytes) there, {} over the limit.\n", Verb(measure_),
                          FormatValue(measured_, "bytes"), measured_, FormatValue(measured_ - limit_ + 1, "bytes"));
  evidence_ += fmt::format("Top {} stack{} by {}:\n", stacks.size(), stacks.size() == 1 ? "" : "s", type);
  evidence_ += FormatStacks(profile, stacks, "bytes");
  auto saved = SaveFailedProfile(profile);
  if (saved.ok()) {
    saved_path_ = saved.value();
    evidence_ += fmt::format("Profile written to {}", saved_path_);
  } else {
    evidence_ += fmt::format("Could not write the profile: {}", saved.status().message());
  }
  return false;
}

std::string AllocationMatcher::describe() const {
  std::string scope =
      (filter_.function.empty() && filter_.script.empty())
          ? std::string()
          : fmt::format(" from {}", FrameMatcher::Compile(filter_).ok() ? FrameMatcher::Compile(filter_)->Describe()
                                                                        : filter_.function + " " + filter_.script);
  std::string text = fmt::format("{} less than {}{}", Verb(measure_), FormatValue(limit_, "bytes"), scope);
  if (!evidence_.empty()) text += ",\n" + evidence_;
  return text;
}

AllocationMatcher AllocatesLessThan(int64_t bytes) {
  return AllocationMatcher(AllocationMatcher::Measure::kAllocated, bytes);
}

AllocationMatcher RetainsLessThan(int64_t bytes) {
  return AllocationMatcher(AllocationMatcher::Measure::kRetained, bytes);
}

}  // namespace heapprof::testing

namespace Catch {

std::string StringMaker<heapprof::Profile>::convert(const heapprof::Profile& profile) {
  int alloc = profile.FindSampleType("alloc_space");
  int inuse = profile.FindSampleType("inuse_space");
  if (alloc < 0 || inuse < 0) return fmt::format("profile of {} samples", profile.samples.size());
  return fmt::format("profile of {} samples ({} allocated, {} in use)", profile.samples.size(),
                     heapprof::FormatValue(profile.Total(alloc), "bytes"),
                     heapprof::FormatValue(profile.Total(inuse), "bytes"));
}

}  // namespace Catch
