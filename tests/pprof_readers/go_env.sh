# Sourced by the reader tests: lets `go tool pprof` run offline in CI, with
# every cache under the test's own work directory.
# shellcheck shell=bash
go_env() {
  local work="$1"
  if ! command -v go >/dev/null 2>&1; then
    echo "go is not installed (tools/bootstrap.sh installs golang-go)" >&2
    exit 1
  fi
  mkdir -p "$work/home" "$work/gocache" "$work/pprof"
  export HOME="$work/home"            # pprof keeps state under $HOME
  export GOCACHE="$work/gocache"      # writable build cache inside the build tree
  export GOPATH="$work/home/go"
  export GOTOOLCHAIN=local            # never download another toolchain
  export GOPROXY=off GOFLAGS=-mod=mod GO111MODULE=off
  export PPROF_TMPDIR="$work/pprof"
  export PPROF_NO_BROWSER=1
}

# Prints "<total>" from pprof's "... of <total> total" header line.
pprof_total() {
  sed -n 's/.* of \([0-9.]*\)B\{0,1\} total.*/\1/p' | head -n1
}
