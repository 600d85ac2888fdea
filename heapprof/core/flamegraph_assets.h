// The flamegraph page template, embedded at build time from
// heapprof/core/flamegraph/page.{html,css,js} (see FlamegraphAssets.cmake).
#pragma once

namespace heapprof::internal {

extern const char kFlamegraphPageHtml[];
extern const char kFlamegraphPageCss[];
extern const char kFlamegraphPageJs[];

}  // namespace heapprof::internal
