// A worker with an LRU cache and a leak that hold about the same bytes by the
// end of `heapprof run --leaks --requests 6200` (tests/cli/leaks_run_test.sh).
// The cache is full once the module is loaded and then turns over (each
// request misses four times: insert, evict the oldest); the leak keeps one
// entry a request forever. Each allocates its entries in its own frame, so
// the growth report names them.
let capacity = 6000;
const cache = new Map();
let leaked = null; // a linked list: growing it allocates in keepForever only
let n = 0;

function cacheEntry(key) {
  return { key, payload: new Array(128).fill(key) };
}

function remember(key) {
  cache.set(key, cacheEntry(key));
  if (cache.size > capacity) cache.delete(cache.keys().next().value);
}

function keepForever(id) {
  leaked = { id, payload: new Array(128).fill(id), next: leaked };
}

for (let k = 0; k < capacity; k++) remember(n++);

export default {
  async fetch(request, env) {
    for (let k = 0; k < 4; k++) remember(n++);
    keepForever(n);
    return new Response("ok");
  },
};
