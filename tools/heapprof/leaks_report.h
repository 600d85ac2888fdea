// What `heapprof attach --leaks` and `heapprof run --leaks` do with a leak
// session at its end: the growth report on stdout, its numbers in the
// profile's comments and, with --leaks-json, in a sidecar JSON file.
#pragma once

#include <string>

#include "heapprof/core/leaks.h"
#include "heapprof/core/profile.h"

namespace heapprof::cli {

// The report's headline numbers as "leaks: ..." and "leak_site: ..." comments.
void AddLeakComments(Profile& profile, const LeakReport& report, size_t top = 10);

// Prints the report (at most `top` steady/unclear sites) and writes the JSON
// to `json_path` (atomically) unless it is empty; kExitFailure when it cannot.
int PrintLeakReport(const std::string& command, const LeakReport& report, const LeakTracker& tracker,
                    const std::string& json_path, size_t top);

}  // namespace heapprof::cli
