#!/usr/bin/env bash
# The worker runtime's DecompressionStream and CompressionStream stream chunk
# by chunk, so memory follows what the worker keeps, not what zlib could
# produce: a gzip bomb (1 GiB of zeros in about 1 MB, made here) read piece by
# piece keeps the process's peak RSS within a few heap limits of what the same
# binary needs to run a worker that only decodes the bomb's base64 (that
# baseline, not a fixed number, so a sanitizer build's larger RSS fits); a
# worker that keeps every piece stops at the heap limit like any hoarder
# (ArrayBuffer bytes count toward it); streams dropped half-way are freed.
# Peak RSS comes from /usr/bin/time -f %M (KiB).
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=lib.sh
source "$here/lib.sh"

limit_mib=64
inflated=$((1 << 30))

[ -x /usr/bin/time ] || { echo "compression_test.sh: needs /usr/bin/time (GNU time)" >&2; exit 2; }
head -c "$inflated" /dev/zero | gzip -9 >bomb.gz
printf 'export default "%s";\n' "$(base64 -w0 bomb.gz)" >bomb.js
packed_bytes=$(wc -c <bomb.gz)

# peak_rss <name>: the peak RSS (KiB) GNU time wrote at the end of <name>.err.
peak_rss() { tail -n 1 "$1.err" | grep -oE '^peak_rss_kib [0-9]+$' | cut -d' ' -f2; }
# measure <exit> <name> <worker>: heapprof run, one request, under GNU time.
measure() {
  local want="$1" name="$2" worker="$3"
  expect_exit "$want" "$name" -- /usr/bin/time -f 'peak_rss_kib %M' "$heapprof" run "$worker" --requests 1 --warmup 0 \
    --heap-limit "$limit_mib" --top 0 -o "$name.pb.gz" --responses-out "$name.jsonl"
}
# run_measured <exit> <name> <worker>: measure, and fail above the bar.
run_measured() {
  local name="$2"
  measure "$@"
  local rss
  rss="$(peak_rss "$name")"
  if [ -z "$rss" ]; then
    fail "$name: no peak RSS from /usr/bin/time"
  elif [ "$rss" -ge "$bar_kib" ]; then
    fail "$name: peak RSS $rss KiB, above the bar of $bar_kib KiB (baseline + 3x the $limit_mib MiB heap limit)"
  else
    echo "$name: peak RSS $rss KiB (bar $bar_kib KiB; the bomb inflates to $((inflated >> 10)) KiB)"
  fi
}

# The baseline: the same binary running a worker that decodes the bomb's
# base64 and inflates nothing. Chunked streams add at most a few heap limits
# to it (a sanitizer build's baseline is larger); the old whole-buffer code
# added the bomb itself, a gigabyte.
cat >baseline.js <<'JS'
import bomb from './bomb.js';
export default {
  async fetch() {
    const packed = Uint8Array.from(atob(bomb), c => c.charCodeAt(0));
    return Response.json({ packed: packed.length });
  },
};
JS
measure 0 baseline baseline.js
baseline_kib="$(peak_rss baseline)"
[ -n "$baseline_kib" ] || { echo "compression_test.sh: no peak RSS for the baseline run" >&2; exit 1; }
bar_kib=$((baseline_kib + 3 * limit_mib * 1024))
echo "baseline: peak RSS $baseline_kib KiB; bar $bar_kib KiB"

# The bomb read piece by piece and counted: every byte arrives, in pieces of at
# most 64 KiB, and the process never holds more than a few heap limits.
cat >reader.js <<'JS'
import bomb from './bomb.js';
export default {
  async fetch() {
    const packed = Uint8Array.from(atob(bomb), c => c.charCodeAt(0));
    const reader = new Response(packed).body.pipeThrough(new DecompressionStream('gzip')).getReader();
    let total = 0, pieces = 0, largest = 0, zeros = true;
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      total += value.length;
      pieces++;
      largest = Math.max(largest, value.length);
      if (value[0] !== 0 || value[value.length - 1] !== 0) zeros = false;
    }
    return Response.json({ packed: packed.length, total, pieces, largest, zeros });
  },
};
JS
run_measured 0 bomb-read reader.js
expect_in bomb-read.jsonl "{\\\"packed\\\":$packed_bytes,\\\"total\\\":$inflated,\\\"pieces\\\":16384,\\\"largest\\\":65536,\\\"zeros\\\":true}"

# The same bomb written through a writer in 1000-byte chunks while another task reads it.
cat >writer.js <<'JS'
import bomb from './bomb.js';
export default {
  async fetch() {
    const packed = Uint8Array.from(atob(bomb), c => c.charCodeAt(0));
    const stream = new DecompressionStream('gzip');
    const writer = stream.writable.getWriter();
    const writing = (async () => {
      for (let at = 0; at < packed.length; at += 1000) await writer.write(packed.subarray(at, at + 1000));
      await writer.close();
    })();
    let total = 0;
    for await (const piece of stream.readable) total += piece.length;
    await writing;
    return Response.json({ total });
  },
};
JS
run_measured 0 bomb-write writer.js
expect_in bomb-write.jsonl "{\\\"total\\\":$inflated}"

# A worker that keeps the whole inflated output: the ArrayBuffers' bytes take
# it over its heap limit, and heapprof run says so and exits 1 (no crash, no
# gigabyte of RSS), as for a worker that hoards JavaScript objects.
cat >hoarder.js <<'JS'
import bomb from './bomb.js';
export default {
  async fetch() {
    const packed = Uint8Array.from(atob(bomb), c => c.charCodeAt(0));
    const all = await new Response(new Response(packed).body.pipeThrough(new DecompressionStream('gzip'))).arrayBuffer();
    return new Response(String(all.byteLength));
  },
};
JS
run_measured 1 bomb-hoard hoarder.js
expect_in bomb-hoard.err "the worker exceeded its heap limit of $limit_mib MiB"
expect_in bomb-hoard.err "MiB of it in ArrayBuffers)"
expect_in bomb-hoard.err "(the profile of the window up to it is written below)"
[ -s bomb-hoard.pb.gz ] || fail "bomb-hoard: no profile of the window written"

# Compression streams dropped half-way (never closed, never read to the end):
# V8 collects them and their zlib state (about 260 KiB a compressor) is freed,
# where 4000 leaked ones would hold about a gigabyte.
cat >dropped.js <<'JS'
export default {
  async fetch() {
    const text = new TextEncoder().encode('some text to compress, '.repeat(5000));
    for (let i = 0; i < 4000; i++) {
      const stream = new CompressionStream(i % 2 ? 'gzip' : 'deflate-raw');
      const writer = stream.writable.getWriter();
      await writer.write(text);  // zlib takes it all; never closed, never read: dropped with data in it
    }
    return new Response('dropped');
  },
};
JS
run_measured 0 dropped dropped.js
expect_in dropped.jsonl '"body":"dropped"'
finish
