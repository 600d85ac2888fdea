#!/usr/bin/env bash
# The npm libraries the worker runtime bundles (web-streams-polyfill,
# urlpattern-polyfill) run as one generated script, heapprof:runtime-libraries.
# `heapprof run` maps their frames through the bundle's embedded source map,
# so a profile names the package file (heapprof:runtime-libraries/
# urlpattern-polyfill/dist/urlpattern.js) instead of a line of a bundle no
# user can open, and carries no path of the machine heapprof was built on.
# With --no-source-maps the frames keep their bundle lines, which also shows
# that the checks below see an unmapped frame when there is one.
#   runtime_libraries_test.sh <heapprof> <source dir> <work dir>
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
source "$here/lib.sh"

# URLPattern matching (about 60k matches over the run) and streams piped
# through a transform; some matches are kept, so in-use has library frames too.
cat >libs.js <<'JS'
const patterns = [
  new URLPattern({ pathname: '/users/:id/posts/:post' }),
  new URLPattern({ pathname: '/files/*', search: 'v=:version' }),
  new URLPattern('https://example.com/api/:version(v\\d+)/items/:item'),
];
const kept = [];
let n = 0;
export default {
  async fetch(request) {
    let matched = 0;
    for (let i = 0; i < 100; i++) {
      if (new URLPattern({ pathname: `/r${i % 7}/:x/*` }).test(`https://example.com/r${i % 7}/${i}/tail`)) matched++;
      for (const pattern of patterns) {
        const m = pattern.exec(`https://example.com/users/${i}/posts/${i * 3}?v=${i}`);
        if (m) kept[n++ % 3000] = m;
      }
    }
    const source = new ReadableStream({
      start(controller) {
        for (let i = 0; i < 64; i++) controller.enqueue(new Uint8Array(256).fill(i));
        controller.close();
      },
    });
    const flip = new TransformStream({ transform(chunk, c) { c.enqueue(chunk.map((b) => b ^ 1)); } });
    const chunks = [];
    await source.pipeThrough(flip).pipeTo(new WritableStream({ write(chunk) { chunks.push(chunk); } }));
    return new Response(`matched ${matched}, ${chunks.length} chunks`);
  },
};
JS

# The file:line of every function row (the last field; rows of built-ins have none).
frame_files() {
  go tool pprof -top -lines -nodecount=100000 -sample_index=alloc_space "$1" 2>/dev/null |
    awk '$NF ~ /:[0-9]+$/ { print $NF }' | sort -u
}

expect_exit 0 run -- "$heapprof" run libs.js -n 150 --interval 16KiB -o libs.pb.gz
frame_files libs.pb.gz >libs.files
[ -s libs.files ] || fail "go tool pprof listed no frame with a file in libs.pb.gz"
grep -qE '^heapprof:runtime-libraries/urlpattern-polyfill/dist/[^:]+:[0-9]+$' libs.files ||
  fail "no frame names urlpattern-polyfill's file (libs.files)"
grep -qE '^heapprof:runtime-libraries/web-streams-polyfill/dist/[^:]+:[0-9]+$' libs.files ||
  fail "no frame names web-streams-polyfill's file (libs.files)"
if grep -E '^heapprof:runtime-libraries:' libs.files >bare.files; then
  fail "$(wc -l <bare.files) frame(s) still at a line of the bundle, e.g. $(head -1 bare.files)"
fi
# Every library frame is a package file; nothing of the build machine anywhere in the profile.
if grep -E '^heapprof:runtime-libraries/' libs.files | grep -vE '^heapprof:runtime-libraries/(urlpattern|web-streams)-polyfill/'; then
  fail "library frames outside the two packages (above)"
fi
go tool pprof -raw libs.pb.gz >libs.raw 2>/dev/null || fail "go tool pprof -raw could not read libs.pb.gz"
if grep -E 'node_modules|\.deps/|js-runtime' libs.raw | head -3 | grep .; then fail "build paths in the profile (above)"; fi

# The report's rows and summary say which library; a note says what these rows are.
expect_in run.out "  heapprof:runtime-libraries/urlpattern-polyfill/dist/urlpattern.js:"
expect_in run.out "heapprof:runtime-libraries/PACKAGE/... rows are npm packages the runtime bundles"
expect_exit 0 top -- "$heapprof" top libs.pb.gz -s alloc_space -n 1000
expect_in top.out "  heapprof:runtime-libraries/web-streams-polyfill/dist/"

# An error thrown inside a library: its stack in the run's outcomes is mapped the same way.
echo "export default { fetch(request) { new URLPattern({ pathname: '/(' }); return new Response('x'); } };" >bad.js
expect_exit 1 bad -- "$heapprof" run bad.js -n 2 -o bad.pb.gz
expect_in bad.out "(heapprof:runtime-libraries/urlpattern-polyfill/dist/urlpattern.js:1:"

# --no-source-maps: the bundle's lines, as V8 reports them.
expect_exit 0 raw -- "$heapprof" run libs.js -n 150 --interval 16KiB --no-source-maps -o raw.pb.gz
frame_files raw.pb.gz >raw.files
grep -qE '^heapprof:runtime-libraries:[0-9]+$' raw.files || fail "--no-source-maps: no frame at a bundle line (raw.files)"
if grep -q '^heapprof:runtime-libraries/' raw.files; then fail "--no-source-maps mapped the libraries' frames"; fi

finish
