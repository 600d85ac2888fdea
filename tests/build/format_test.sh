#!/usr/bin/env bash
# The C++ sources follow .clang-format: the tree was reformatted once, and this
# keeps it so. It lists what would change and how to fix it.
#   format_test.sh <source dir>
set -uo pipefail
src="$1"
cd "$src" || exit 1
format="$(command -v clang-format || command -v clang-format-14 || true)"
[ -n "$format" ] || { echo "FAIL: clang-format is not installed (tools/bootstrap.sh installs it)"; exit 1; }
files=()
if git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  while IFS= read -r f; do [ -f "$f" ] && files+=("$f"); done < <(git ls-files '*.cpp' '*.cc' '*.h' '*.hpp')
else
  while IFS= read -r f; do files+=("${f#./}"); done < <(find heapprof include tools tests examples \
    \( -name '*.cpp' -o -name '*.cc' -o -name '*.h' -o -name '*.hpp' \) -not -path '*/node_modules/*')
fi
[ "${#files[@]}" -ge 100 ] || { echo "FAIL: found only ${#files[@]} C++ files under $src"; exit 1; }
bad=()
for f in "${files[@]}"; do
  "$format" --dry-run --Werror "$f" >/dev/null 2>&1 || bad+=("$f")
done
if [ "${#bad[@]}" -gt 0 ]; then
  printf 'FAIL: not clang-format clean: %s\n' "${bad[@]}"
  echo "fix: clang-format -i ${bad[*]}"
  exit 1
fi
echo "ok: ${#files[@]} C++ files are clang-format clean ($("$format" --version | head -1))"
