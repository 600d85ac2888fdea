#!/usr/bin/env bash
# Keeps the layout: one folder = one library = one include directory.
#   layout_test.sh <source dir>
# - every heapprof/<lib>/ has a CMakeLists.txt defining heapprof_<lib>, and
#   every include/heapprof/<lib>/ belongs to such a library;
# - a public header (include/heapprof/...) includes only public headers;
# - a library's files (heapprof/<lib>/, include/heapprof/<lib>/) include
#   another library's headers only from include/heapprof/<other>/, never
#   heapprof/<other>/ (its private headers);
# - no header name is both public and private in one library;
# - each library's CMakeLists.txt names every heapprof library it includes
#   (heapprof_<other>) and every heavy third-party dependency it includes
#   (V8, OpenSSL, cpptoml, zlib, Catch2, Boost), not by luck of a transitive one.
set -euo pipefail
src="$1"
cd "$src"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

libs=()
for dir in heapprof/*/; do
  lib=$(basename "$dir")
  cmake="heapprof/$lib/CMakeLists.txt"
  if [[ ! -f "$cmake" ]]; then fail "heapprof/$lib/ has no CMakeLists.txt"; continue; fi
  libs+=("$lib")
done
for dir in include/heapprof/*/; do
  lib=$(basename "$dir")
  [[ -f "heapprof/$lib/CMakeLists.txt" ]] || fail "include/heapprof/$lib/ mirrors no library folder heapprof/$lib/"
done
for f in include/heapprof/*; do
  [[ -d "$f" ]] || fail "$f: a public header outside any library's include directory"
done

# The quoted heapprof includes of a file: "heapprof/<lib>/<rest>".
includes() { sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\(heapprof\/[^"]*\)".*/\1/p' "$1"; }
# The <...> includes of a file.
system_includes() { sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*<\([^>]*\)>.*/\1/p' "$1"; }

# Public headers include only public headers (an installed header cannot reach a private one).
while IFS= read -r h; do
  while IFS= read -r inc; do
    [[ "$inc" == heapprof/proto/* ]] && continue  # generated into the build tree
    [[ -f "include/$inc" ]] || fail "$h includes $inc, which is not a public header (include/$inc)"
  done < <(includes "$h")
done < <(find include/heapprof -name '*.h' | sort)

for lib in "${libs[@]}"; do
  cmake="heapprof/$lib/CMakeLists.txt"
  # One name, one home.
  if [[ -d "include/heapprof/$lib" ]]; then
    while IFS= read -r h; do
      if [[ -f "include/heapprof/$lib/$(basename "$h")" ]]; then
        fail "heapprof/$lib/$(basename "$h") is both private and public (include/heapprof/$lib/)"
      fi
    done < <(find "heapprof/$lib" -maxdepth 1 -name '*.h')
  fi
  needed=()
  files=$(find "heapprof/$lib" "include/heapprof/$lib" -type f \( -name '*.h' -o -name '*.cpp' \) 2>/dev/null | sort || true)
  for f in $files; do
    while IFS= read -r inc; do
      other=${inc#heapprof/}
      other=${other%%/*}
      if [[ "$other" != "$lib" ]]; then
        if [[ "$other" != proto && -f "$inc" ]]; then
          fail "$f includes $inc, a private header of heapprof_$other"
        fi
        needed+=("$other")
      fi
    done < <(includes "$f")
    while IFS= read -r inc; do
      case "$inc" in
        v8.h | v8-*.h | libplatform/*) [[ "$lib" == node ]] || needed+=("V8::V8") ;;  # the addon: Node's headers
        openssl/*) needed+=("OpenSSL::Crypto") ;;
        cpptoml.h) needed+=("cpptoml") ;;
        zlib.h) needed+=("ZLIB::ZLIB") ;;
        catch2/* | catch.hpp) needed+=("Catch2::Catch2") ;;
        boost/*) needed+=("Boost") ;;
      esac
    done < <(system_includes "$f")
  done
  for dep in $(printf '%s\n' "${needed[@]}" | sort -u); do
    case "$dep" in
      *::* | cpptoml) target="$dep" ;;
      Boost) target="Boost" ;;  # Boost::headers or ${Boost_INCLUDE_DIRS}
      *) target="heapprof_$dep" ;;
    esac
    if [[ "$lib" == node && "$target" == heapprof_* ]]; then
      # The addons compile the collector's sources themselves against Node's
      # headers and link the core's lite copy (NodeAddon.cmake).
      case "$target" in heapprof_v8 | heapprof_core) continue ;; esac
    fi
    if ! grep -qs -- "$target" "$cmake" heapprof/"$lib"/*.cmake; then
      fail "heapprof_$lib includes headers of $target, which $cmake does not name"
    fi
  done
done

if ((failures)); then
  echo "$failures layout failure(s)"
  exit 1
fi
echo "layout: ${#libs[@]} libraries (${libs[*]}), public headers include only public headers, no library includes another's private header"
