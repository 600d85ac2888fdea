#!/usr/bin/env bash
# A full disk does not throw a run away (issue #36: `run -o` on a full
# filesystem served every request, then "No space left on device", exit 1,
# and neither the profile nor the tables were printed). Now: a filesystem
# with too little room is refused before the run; a write that fails anyway
# (ENOSPC from /dev/full, EFBIG from a file-size limit) still prints the
# tables, and the profile goes to --fallback-dir or the temporary folder with
# the path printed, or every failure is listed; serve --continuous's
# windows (the last ones at SIGTERM, and each of --continuous D) and
# --on-heap-limit's captures likewise, on a really full tmpfs.
#   full_disk_test.sh <heapprof> <source dir> <work dir>
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
source "$here/lib.sh"

run=("$heapprof" run "$examples/clean.js" -n 300 --warmup 50)

# --- ENOSPC: the tables are printed, the profile is in --fallback-dir
mkdir fb
expect_exit 1 nospace -- "${run[@]}" -o /dev/full --fallback-dir fb
expect_in nospace.err "No space left on device"
expect_in nospace.err "the profile is written to fb/full instead"
expect_in nospace.out "alloc_space"
"$heapprof" top fb/full >fb.top 2>&1 || fail "the fallback profile does not parse: $(cat fb.top)"
# A second run never replaces the first one's fallback file.
expect_exit 1 nospace2 -- "${run[@]}" -o /dev/full --fallback-dir fb
expect_in nospace2.err "the profile is written to fb/full-1 instead"
cmp -s fb/full fb/full-1 && fail "the second fallback file is the first one"
# The flamegraph page too.
expect_exit 1 nospace-page -- "${run[@]}" -o page.pb.gz --flamegraph /dev/full --fallback-dir fb
expect_in nospace-page.err "the flamegraph is written to fb/full-2 instead"
grep -q "<html" fb/full-2 || fail "the fallback flamegraph is not the page"
[ -s page.pb.gz ] || fail "the profile beside a failed flamegraph was not written"
# Without --fallback-dir, the temporary folder.
mkdir tmp
TMPDIR="$work/tmp" expect_exit 1 nospace3 -- "${run[@]}" -o /dev/full
expect_in nospace3.err "the profile is written to $work/tmp/full instead"
[ -s tmp/full ] || fail "no profile in the temporary folder"
expect_exit 1 badfb -- "${run[@]}" -o w.pb.gz --fallback-dir nowhere
expect_exit 1 badfb2 -- "${run[@]}" -o w.pb.gz --fallback-dir fb/full
expect_in badfb2.err "--fallback-dir needs an existing folder"

# --- EFBIG (ulimit -f): no folder takes it; every failure is said, the tables printed
# (256 bytes: less than any profile. The limit is heapprof's alone: its output goes through a pipe to a file without one.)
set +o pipefail
prlimit --fsize=256 "${run[@]}" -o big.pb.gz --fallback-dir fb 2>&1 | cat >fsize.txt
got="${PIPESTATUS[0]}"
set -o pipefail
[ "$got" = 1 ] || { fail "a file-size limit: exit $got, expected 1"; cat fsize.txt >&2; }
expect_in fsize.txt "File too large"
expect_in fsize.txt "the profile could not be written anywhere"
expect_in fsize.txt "alloc_space"
[ -e big.pb.gz ] && fail "a partial big.pb.gz was left"

# --- serve --continuous: the output folder gone at SIGTERM; the last window goes to --fallback-dir
# shellcheck source=serve_lib.sh
source "$here/serve_lib.sh"
mkdir gone servefb
start_serve cont "$examples/clean.js" --continuous --output-dir gone --fallback-dir servefb
curl -s -o /dev/null "$base/api/users/[1-50]"
rm -r gone
kill -TERM "$serve_pid"
code=0
wait "$serve_pid" || code=$?
[ "$code" = 1 ] || fail "serve with its --output-dir gone exited $code, not 1"
expect_in cont.err "written to servefb/clean-"
expect_in cont.out "wrote servefb/clean-"
ls servefb/clean-*.pb.gz >/dev/null 2>&1 || fail "no last window in --fallback-dir"
"$heapprof" top servefb/clean-*.pb.gz >cont.top 2>&1 || fail "the fallback window does not parse: $(cat cont.top)"
expect_exit 2 serve-fb-alone -- "$heapprof" serve "$examples/clean.js" --fallback-dir servefb
expect_in serve-fb-alone.err "--fallback-dir is where --continuous"

# --- serve on a really full filesystem (a tmpfs filled up, when mounting is allowed):
# a near-heap-limit capture and every --continuous D window go to --fallback-dir,
# each said on stderr, listed and served; nothing half-written is left on the full disk
cat >hoard.js <<'JS'
const hoard = [];
function hoardEverything() {
  for (;;) hoard.push({ pad: new Array(64).fill(hoard.length) });
}
export default {
  async fetch(request) {
    if (new URL(request.url).pathname === '/hoard') hoardEverything();
    return new Response('ok');
  },
};
JS
mkdir full
if mount -t tmpfs -o size=16k tmpfs full 2>mount.err; then
  trap 'kill -9 "$serve_pid" 2>/dev/null; umount "$work/full" 2>/dev/null || true' EXIT
  head -c 1M /dev/zero >full/filler 2>/dev/null || true
  mkdir capfb winfb
  start_serve cap hoard.js --heap-limit 32 --on-heap-limit full --fallback-dir capfb
  code="$(curl -s -o hoard.body -w '%{http_code}' "$base/hoard")"
  [ "$code" = 503 ] || fail "the hoarding request is $code, not 503"
  for _ in $(seq 1 100); do ls capfb/*.pb.gz >/dev/null 2>&1 && break; sleep 0.1; done
  capture="$(ls capfb | head -n1)"
  [ -n "$capture" ] || fail "no near-heap-limit capture in --fallback-dir: $(cat cap.err)"
  expect_in cap.err "near-heap-limit capture:"
  expect_in cap.err "No space left on device); written to capfb/$capture instead"
  curl -s "$debug/debug/pprof/" >cap-index.html
  expect_in cap-index.html "$capture"
  curl -s -o cap-fetched.pb.gz "$debug/debug/heapprof/captures/$capture"
  "$heapprof" top cap-fetched.pb.gz >cap.top 2>&1 || fail "the fallback capture does not parse: $(cat cap.top)"
  expect_in cap.top "hoardEverything"
  kill -TERM "$serve_pid"
  code=0
  wait "$serve_pid" || code=$?
  [ "$code" = 1 ] || fail "serve with a capture in the fallback folder exited $code, not 1"
  start_serve win "$examples/clean.js" --replicas 2 --continuous 1s --output-dir full --fallback-dir winfb
  curl -s -o /dev/null "$base/api/users/[1-200]"
  for _ in $(seq 1 100); do [ "$(ls winfb | wc -l)" -ge 4 ] && break; sleep 0.1; done
  kill -TERM "$serve_pid"
  code=0
  wait "$serve_pid" || code=$?
  [ "$code" = 1 ] || fail "serve with windows in the fallback folder exited $code, not 1"
  [ "$(ls winfb | wc -l)" -ge 4 ] || fail "fewer than 4 windows in --fallback-dir: $(ls winfb)"
  expect_in win.err "No space left on device); written to winfb/clean-0-"
  expect_in win.err "No space left on device); written to winfb/clean-1-"
  expect_in win.out "of them written to a fallback folder instead"
  for f in winfb/*.pb.gz; do "$heapprof" top "$f" >/dev/null 2>&1 || fail "the fallback window $f does not parse"; done
  [ "$(grep -c "written to winfb/" win.err)" = "$(ls winfb | wc -l)" ] || fail "a fallback window was written without a word"
  [ "$(ls -A full)" = filler ] || fail "files left on the full filesystem: $(ls -A full)"
  umount full
  trap - EXIT
else
  echo "skipping the full tmpfs check for serve: mount is not permitted here ($(cat mount.err))"
fi

# --- a filesystem with too little room is refused before the run
mkdir small
if mount -t tmpfs -o size=16k tmpfs small 2>mount.err; then
  expect_exit 1 small -- "${run[@]}" -o small/w.pb.gz
  expect_in small.err "its filesystem has"
  grep -q "Profiled" small.out && fail "the run went ahead on a filesystem with no room"
  umount small
else
  echo "skipping the tmpfs check: mount is not permitted here ($(cat mount.err))"
fi

finish
