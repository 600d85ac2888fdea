// Writes the pages the browser test opens: the known profile, a 50k-frame
// profile, a diff of two leak windows, and the SVG and pprof files beside them
// (the pprof files feed the CLI checks).
#include <cstdio>
#include <string>

#include "heapprof/core/diff.h"
#include "heapprof/core/file_io.h"
#include "heapprof/core/flamegraph.h"
#include "heapprof/core/pprof.h"
#include "unit/flamegraph_profiles.h"

using namespace heapprof;

namespace {

bool Check(const Status& s, const std::string& what) {
  if (!s.ok()) std::fprintf(stderr, "flamegraph_pages: %s: %s\n", what.c_str(), s.message().c_str());
  return s.ok();
}

bool WritePage(const std::string& path, const Result<std::string>& page) {
  if (!Check(page.status(), path)) return false;
  return Check(WriteFileAtomic(path, page.value()), path);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUTDIR\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  Profile known = testing::KnownProfile();
  Profile big = testing::BigProfile(50'000);
  FlamegraphOptions options;
  options.title = "known profile";
  bool ok = WritePage(dir + "/known.html", RenderFlamegraphHtml(known, options));
  options.title = "50k frames";
  ok = WritePage(dir + "/big.html", RenderFlamegraphHtml(big, options)) && ok;
  DiffOptions diff_options;
  diff_options.sample_type = "inuse_space";
  ok = WritePage(dir + "/diff.html", RenderDiffFlamegraphHtml(testing::LeakFirstWindow(), testing::LeakSecondWindow(),
                                                              diff_options, "two windows of a leak")) &&
       ok;
  ok = WritePage(dir + "/diff-noise.html",
                 RenderDiffFlamegraphHtml(testing::NoisyFirstWindow(), testing::NoisySecondWindow(), diff_options,
                                          "a change within the noise")) &&
       ok;
  FlamegraphSvgOptions svg;
  svg.sample_type = "alloc_space";
  svg.title = "known profile";
  ok = WritePage(dir + "/known.svg", RenderFlamegraphSvg(known, svg)) && ok;
  ok = Check(WritePprofFile(dir + "/known.pb.gz", known), "known.pb.gz") && ok;
  ok = Check(WritePprofFile(dir + "/big.pb.gz", big), "big.pb.gz") && ok;
  // For the CLI checks: two windows of a leak, and an empty profile.
  ok = Check(WritePprofFile(dir + "/leak-1.pb.gz", testing::LeakFirstWindow()), "leak-1.pb.gz") && ok;
  ok = Check(WritePprofFile(dir + "/leak-2.pb.gz", testing::LeakSecondWindow()), "leak-2.pb.gz") && ok;
  ok = Check(WritePprofFile(dir + "/empty.pb.gz", BuildProfile(testing::SnapshotOf({}))), "empty.pb.gz") && ok;
  return ok ? 0 : 1;
}
