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

finish
