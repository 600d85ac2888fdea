// The page of a leak session's report (/debug/heapprof/leaks.html): the
// projection, the verdict per site, and each top site's live bytes over the
// session's snapshots as a chart. Drawn on the server (SVG, no script), from
// the report's JSON (LeakSession::ReportJson).
#pragma once

#include <string>
#include <string_view>

#include "heapprof/core/status.h"

namespace heapprof::internal {

// kInvalidArgument when `report_json` is not such a report.
Result<std::string> RenderLeakPage(std::string_view report_json, std::string_view target);

}  // namespace heapprof::internal
