#!/usr/bin/env bash
# Hostile and broken input (docs/security.md): no crash, no hang, no memory
# blow-up, no file read or written that the user did not name. Every file is
# made here: FIFOs, devices, planted symlinks, bombs.
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
source "$here/lib.sh"
profile="$src/tests/cli/data/prometheus-leak.pb.gz"

# An endless device is refused by type before a byte is read.
expect_exit 1 dev-zero -- timeout 20 "$heapprof" top /dev/zero
expect_in dev-zero.err "'/dev/zero' is a device, not a regular file"

# A gzip bomb (128 MiB of zeros in about 130 KB) stops at 64x its size, not at the 1 GiB ceiling.
head -c $((128 << 20)) /dev/zero | gzip -9 >bomb.pb.gz
expect_exit 1 bomb -- "$heapprof" top bomb.pb.gz
expect_in bomb.err "expands beyond the 64 MiB limit"

# A .heapprofile whose sizes would overflow the totals.
cat >huge.heapprofile <<'JSON'
{"head":{"callFrame":{"functionName":"(root)","scriptId":"0","url":"","lineNumber":-1,"columnNumber":-1},"selfSize":0,"id":1,"children":[
{"callFrame":{"functionName":"big","scriptId":"1","url":"a.js","lineNumber":0,"columnNumber":0},"selfSize":9223372036854775807,"id":2,"children":[]}]},
"samples":[]}
JSON
expect_exit 1 huge -- "$heapprof" top huge.heapprofile
expect_in huge.err "selfSize of 9223372036854775807, beyond 2^36"

# Source maps: a worker's sourceMappingURL may not steer heapprof to a FIFO
# (open() would block), outside the worker's folder, or into /proc and /etc;
# nothing read is echoed into warnings or the profile's comments.
mkdir -p w outside
secret="SECRET_$$_TOKEN"
printf '{"version":"%s","sources":[],"mappings":""}\n' "$secret" >outside/secret.map
mkfifo w/fifo.map
# Each worker allocates in its own frames, so the profile names it and its map is looked up.
body='const keep = []; function hold() { keep.push(new Array(512).fill(keep.length)); }\nexport default { fetch() { hold(); return new Response("ok"); } };\n'
worker() { printf "$body"'//# sourceMappingURL=%s\n' "$1" >"w/$2.js"; }
worker fifo.map fifo
expect_exit 0 map-fifo -- timeout 60 "$heapprof" run w/fifo.js -n 200 --interval 1k -o map-fifo.pb.gz
expect_in map-fifo.err "is a FIFO, not a regular file"
for url in "$work/outside/secret.map" ../outside/secret.map "file://$work/outside/secret.map" /proc/self/environ /etc/passwd; do
  worker "$url" escape
  expect_exit 0 map-escape -- timeout 60 "$heapprof" run w/escape.js -n 200 --interval 1k -o map-escape.pb.gz
  expect_in map-escape.err "names a file outside the folders heapprof reads maps from"
  if gzip -dc map-escape.pb.gz | grep -qaF -e "$secret" -e root:x -e PATH=; then fail "map-escape ($url): content read into the profile"; fi
  if grep -qF -e "$secret" -e root:x -e PATH= map-escape.err map-escape.out; then fail "map-escape ($url): content echoed"; fi
done
# A planted WORKER.js.map link out of the folder is not followed.
printf "$body" >w/linked.js
ln -s "$work/outside/secret.map" w/linked.js.map
expect_exit 0 map-link -- timeout 60 "$heapprof" run w/linked.js -n 200 --interval 1k -o map-link.pb.gz
if grep -qF "$secret" map-link.err || gzip -dc map-link.pb.gz | grep -qaF "$secret"; then fail "map-link: followed the link"; fi
# --source-map-path names another folder the maps may come from.
worker ../outside/secret.map allowed
expect_exit 0 map-allowed -- timeout 60 "$heapprof" run w/allowed.js -n 200 --interval 1k -o map-allowed.pb.gz --source-map-path outside
expect_in map-allowed.err "unsupported source map version: a string instead of the number 3"
if grep -qF "$secret" map-allowed.err || gzip -dc map-allowed.pb.gz | grep -qaF "$secret"; then fail "map-allowed: map content echoed"; fi

# A module import of a FIFO or a device fails the load instead of hanging it.
mkfifo w/fifo-module.js
printf 'import "./fifo-module.js";\nexport default { fetch() { return new Response("ok"); } };\n' >w/imports-fifo.js
expect_exit 1 import-fifo -- timeout 60 "$heapprof" run w/imports-fifo.js -n 5 -o import-fifo.pb.gz
expect_in import-fifo.err "is a FIFO, not a regular file"
printf 'import "/dev/zero";\nexport default { fetch() { return new Response("ok"); } };\n' >w/imports-zero.js
expect_exit 1 import-zero -- timeout 60 "$heapprof" run w/imports-zero.js -n 5 -o import-zero.pb.gz
expect_in import-zero.err "is a device, not a regular file"

# symbolize reads the scripts a (possibly hostile) profile names only under the folders the user names.
expect_exit 0 sym-none -- "$heapprof" symbolize map-escape.pb.gz -o sym-none.pb.gz
expect_in sym-none.err "no folder to read scripts and maps from"
expect_exit 0 sym-fifo -- timeout 60 "$heapprof" symbolize map-fifo.pb.gz --source-map-path w -o sym-fifo.pb.gz
expect_in sym-fifo.err "is a FIFO, not a regular file"

# An output that is one of the inputs is refused before anything is read or
# written, by file identity: the same name, another path, or a link to it.
cp "$profile" p.pb.gz
cp p.pb.gz q.pb.gz
ln -s p.pb.gz p-link.pb.gz
printf "$body" >self.js
sum_before="$(cksum p.pb.gz q.pb.gz self.js)"
expect_exit 1 run-self -- "$heapprof" run self.js -n 10 -o self.js
expect_in run-self.err "cannot write self.js: it is the input self.js"
expect_exit 1 run-self-flamegraph -- "$heapprof" run self.js -n 10 -o ok.pb.gz --flamegraph ./self.js
expect_in run-self-flamegraph.err "it is the input self.js"
expect_exit 1 flamegraph-self -- "$heapprof" flamegraph p.pb.gz -o p.pb.gz
expect_in flamegraph-self.err "cannot write p.pb.gz: it is the input p.pb.gz"
expect_exit 1 flamegraph-link -- "$heapprof" flamegraph p.pb.gz -o p-link.pb.gz
expect_in flamegraph-link.err "it is the input p.pb.gz"
expect_exit 1 diff-self -- "$heapprof" diff p.pb.gz q.pb.gz --flamegraph "$work/q.pb.gz"
expect_in diff-self.err "it is the input q.pb.gz"
expect_exit 1 symbolize-self -- "$heapprof" symbolize p.pb.gz --maps w -o "../$(basename "$work")/p.pb.gz"
expect_in symbolize-self.err "it is the input p.pb.gz"
[ "$(cksum p.pb.gz q.pb.gz self.js)" = "$sum_before" ] || fail "an input was modified"
[ -e ok.pb.gz ] && fail "run-self-flamegraph wrote ok.pb.gz"
# Two outputs that are one file, and a folder that cannot take a file: refused up front.
expect_exit 1 run-twice -- "$heapprof" run self.js -n 10 -o same.pb.gz --flamegraph same.pb.gz
expect_in run-twice.err "cannot write same.pb.gz: it is another output too"
expect_exit 1 run-unwritable -- "$heapprof" run self.js -n 10 -o /proc/self/x.pb.gz
expect_in run-unwritable.err "cannot write /proc/self/x.pb.gz: cannot create a file in '/proc/self'"
expect_not_in() { if grep -qF -- "$2" "$1"; then fail "$1 has: $2"; fi; }
expect_not_in run-unwritable.out "Profiled"

# Control characters in names (a retitled window, a cleared screen, a rewritten
# line) reach the terminal escaped: top, diff and the stacks of top --focus.
cat >ctl.heapprofile <<'JSON'
{"head":{"callFrame":{"functionName":"(root)","scriptId":"0","url":"","lineNumber":-1,"columnNumber":-1},"selfSize":0,"id":1,"children":[
{"callFrame":{"functionName":"evil\u001b]0;pwned\u0007\r","scriptId":"1","url":"/srv/a\u001b[2J\u009b.js","lineNumber":3,"columnNumber":0},"selfSize":4096,"id":2,"children":[]}]},
"samples":[]}
JSON
expect_exit 0 ctl-top -- "$heapprof" top ctl.heapprofile
expect_exit 0 ctl-diff -- "$heapprof" diff "$profile" ctl.heapprofile
for f in ctl-top.out ctl-diff.out; do
  if LC_ALL=C grep -q "$(printf '[\001-\010\013-\037\177]')" "$f"; then fail "$f holds raw control characters"; fi
  if grep -qF "$(printf '\302\233')" "$f"; then fail "$f holds a raw 8-bit CSI"; fi
  expect_in "$f" 'evil\x1b]0;pwned\x07\x0d'
done
expect_in ctl-top.out 'a\x1b[2J\u009b.js:4'

finish
