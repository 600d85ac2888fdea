// A one-line status display on a terminal, redrawn in place, that other
// output (the worker's console) can print above without garbling it.
#pragma once

#include <string>
#include <string_view>

namespace heapprof::cli {

class ProgressLine {
 public:
  // Draws only when `enabled` (stderr is a terminal).
  explicit ProgressLine(bool enabled) : enabled_(enabled) {}
  ~ProgressLine() { Clear(); }
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  bool enabled() const { return enabled_; }
  // Replaces the line's text.
  void Show(const std::string& text);
  // Prints a full line to stderr, then redraws the status below it.
  void PrintAbove(std::string_view line);
  // Erases the line (before the final report).
  void Clear();

 private:
  bool enabled_;
  std::string text_;
  bool drawn_ = false;
};

// Whether stderr is an interactive terminal.
bool StderrIsTerminal();

}  // namespace heapprof::cli
