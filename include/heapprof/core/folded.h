// Folded stacks ("root;caller;leaf value" per line), the input of
// flamegraph.pl, inferno and speedscope.
#pragma once

#include <string>

#include "heapprof/core/profile.h"
#include "heapprof/core/status.h"

namespace heapprof {

struct FoldedOptions {
  // Sample type by name ("alloc_space") or index; empty = the profile's default.
  std::string sample_type;
  // Append " (file:line)" to each frame so same-named functions of different files stay apart.
  bool with_filenames = false;
};

// One line per distinct stack with a non-zero value, root first, sorted by
// stack; ';' and line breaks inside names are replaced so lines stay parseable.
Result<std::string> EncodeFolded(const Profile& profile, const FoldedOptions& options = {});

}  // namespace heapprof
