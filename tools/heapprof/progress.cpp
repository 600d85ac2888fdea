#include "tools/heapprof/progress.h"

#include <unistd.h>

#include <cstdio>

namespace heapprof::cli {

bool StderrIsTerminal() { return isatty(STDERR_FILENO) == 1; }

void ProgressLine::Show(const std::string& text) {
  if (!enabled_) return;
  text_ = text;
  // \r back to column 0, the text, then erase what a longer previous text left.
  std::fprintf(stderr, "\r%s\x1b[K", text_.c_str());
  std::fflush(stderr);
  drawn_ = true;
}

void ProgressLine::PrintAbove(std::string_view line) {
  if (enabled_ && drawn_) std::fputs("\r\x1b[K", stderr);
  std::fwrite(line.data(), 1, line.size(), stderr);
  if (line.empty() || line.back() != '\n') std::fputc('\n', stderr);
  if (enabled_ && drawn_) std::fprintf(stderr, "%s", text_.c_str());
  std::fflush(stderr);
}

void ProgressLine::Clear() {
  if (!enabled_ || !drawn_) return;
  std::fputs("\r\x1b[K", stderr);
  std::fflush(stderr);
  drawn_ = false;
}

}  // namespace heapprof::cli
