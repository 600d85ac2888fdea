// A worker with a steady heap of ~22 MiB (an LRU cache of 20000 ~1 KiB
// entries that turns over, no leak), for tools/bench/leaks_cost.sh: what a
// leak session's snapshots cost at the default cadence is mostly their full
// GC, which grows with the live heap.
const capacity = 20000;
const cache = new Map();
let n = 0;

function cacheEntry(key) {
  return { key, payload: new Array(120).fill(key) };
}

function remember(key) {
  cache.set(key, cacheEntry(key));
  if (cache.size > capacity) cache.delete(cache.keys().next().value);
}

for (let k = 0; k < capacity; k++) remember(n++);

export default {
  async fetch(request) {
    for (let k = 0; k < 4; k++) remember(n++);
    return new Response("ok");
  },
};
