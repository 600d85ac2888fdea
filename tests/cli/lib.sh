# Sourced by the CLI tests: arguments, a fresh work directory, assertions.
#   <test>.sh <heapprof executable> <source dir> <work dir>
# shellcheck shell=bash
set -euo pipefail
heapprof="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
src="$2"
work="$3"
examples="$src/examples/workers"
rm -rf "$work" && mkdir -p "$work"
cd "$work"
failures=0

fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

# expect_exit <code> <name> -- <command...>: runs it, keeps stdout/stderr in <name>.out/.err.
expect_exit() {
  local want="$1" name="$2"
  shift 3
  local got=0
  "$@" >"$name.out" 2>"$name.err" || got=$?
  if [ "$got" != "$want" ]; then
    fail "$name: exit code $got, expected $want"
    sed 's/^/    /' "$name.err" >&2
  fi
}

# expect_in <file> <fixed text>: the file contains the text.
expect_in() {
  grep -qF -- "$2" "$1" || { fail "$1 lacks: $2"; sed 's/^/    /' "$1" >&2; }
}

# The first function row of a table in a `heapprof top`-style output, by the
# sample type named in the table's first line.
top_function() {
  local file="$1" type="$2"
  awk -v t="$type:" '$1 == t {found = 1; next} found && /flat%/ {getline; print $NF == "" ? "" : $0; exit}' "$file" |
    awk '{ for (i = 1; i <= NF; i++) if ($i ~ /%$/) last = i; n = last + 1; if ($n ~ /^±/) n++; print $n }'
}

# The flat share (a number, without %) of the first row of a sample type's table.
top_share() {
  local file="$1" type="$2"
  awk -v t="$type:" '$1 == t {found = 1; next} found && /flat%/ {getline; print; exit}' "$file" |
    awk '{ for (i = 1; i <= NF; i++) if ($i ~ /%$/) { sub(/%/, "", $i); print $i; exit } }'
}

# pprof_shares <go tool pprof -top output> <function>: the flat and cum
# shares (numbers, without %) of the function's row, or "0 0" without one.
pprof_shares() {
  awk -v f="$2" 'substr($0, length($0) - length(f)) == " " f { gsub(/%/, ""); print $2, $5; found = 1; exit }
                 END { if (!found) print 0, 0 }' "$1"
}

finish() {
  if [ "$failures" -gt 0 ]; then
    echo "$failures check(s) failed (work dir: $work)" >&2
    exit 1
  fi
  echo "all checks passed"
}
