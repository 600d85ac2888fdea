// A Node.js service whose two small helpers the optimizing compiler inlines
// into a timer callback (and that callback into Node's own timer loop), for
// the exact-attribution tests of `heapprof attach`: started with no flags,
// retainTelemetryFrame keeps a growing Map (the leak: most of inuse_space),
// churnFormatting makes the garbage (most of alloc_space). With inlining on,
// V8's sampler charges both to their caller.
// route -> its newest frame, each frame holding the one before: what the Map
// keeps grows with every call, while the Map itself keeps its 64 keys (a
// growing table would be rehashed by Map.prototype.set, a built-in frame
// that V8 charges for the new table instead of the helper).
const frames = new Map();
let retained = 0;

function retainTelemetryFrame(n) {
  const route = n & 63;
  const frame = { id: retained++, at: n, route, values: new Array(24).fill(n), previous: frames.get(route) };
  frames.set(route, frame);
  if (retained >= 150000) {  // ~50 MB: bounded for the tests, but growing over any window they open
    frames.clear();
    retained = 0;
  }
  return frame.values.length;
}

function churnFormatting(n) {
  const lines = [];
  for (let i = 0; i < 24; i++) {
    lines.push({ text: `${n}:${i}:${(n * i) % 977}|status=ok|region=eu|` + n * 1.5, n, i });
  }
  return lines;  // the caller keeps only the count: garbage, but it escapes, so it is allocated
}

let total = 0;
let batch = 4000;  // the first seconds: hot enough to be optimized (and inlined) before anyone attaches
function onTick() {
  for (let i = 0; i < batch; i++) {
    total += churnFormatting(i).length;
    if (i % 16 === 0) total += retainTelemetryFrame(i);
  }
}
setInterval(onTick, 5);
setTimeout(() => {
  batch = 600;
  console.error("inlined target ready");
}, 2000);
