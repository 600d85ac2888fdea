// A node --inspect target for `heapprof attach --leaks`: an LRU cache and a
// leak that hold about the same bytes by the end of a short session. The
// cache is full before "node target ready" and then turns over (each tick
// misses, inserts and evicts the oldest entry); the leak keeps one entry a
// tick forever. Both allocate their entries in their own frames (object and
// array literals), so the growth report names them.
//   node --inspect=127.0.0.1:0 leak_lru_target.mjs [cache entries]
const capacity = Number(process.argv[2] ?? 1536);
const cache = new Map();
let leaked = null;  // a linked list: growing it allocates in keepForever only
let n = 0;

function cacheEntry(key) {
  return { key, payload: [key, key + 1, key + 2, key + 3, key + 4, key + 5, key + 6, key + 7,
                          key, key, key, key, key, key, key, key, key, key, key, key, key, key, key, key,
                          key, key, key, key, key, key, key, key, key, key, key, key, key, key, key, key,
                          key, key, key, key, key, key, key, key, key, key, key, key, key, key, key, key,
                          key, key, key, key, key, key, key, key, key, key, key, key, key, key, key, key,
                          key, key, key, key, key, key, key, key, key, key, key, key, key, key, key, key,
                          key, key, key, key, key, key, key, key, key, key, key, key, key, key, key, key,
                          key, key, key, key, key, key, key, key, key, key, key, key, key, key, key, key] };
}

function remember(key) {
  cache.set(key, cacheEntry(key));
  if (cache.size > capacity) cache.delete(cache.keys().next().value);
}

function keepForever(id) {
  leaked = { id, payload: [id, id + 1, id + 2, id + 3, id + 4, id + 5, id + 6, id + 7,
                           id, id, id, id, id, id, id, id, id, id, id, id, id, id, id, id,
                           id, id, id, id, id, id, id, id, id, id, id, id, id, id, id, id,
                           id, id, id, id, id, id, id, id, id, id, id, id, id, id, id, id,
                           id, id, id, id, id, id, id, id, id, id, id, id, id, id, id, id,
                           id, id, id, id, id, id, id, id, id, id, id, id, id, id, id, id,
                           id, id, id, id, id, id, id, id, id, id, id, id, id, id, id, id,
                           id, id, id, id, id, id, id, id, id, id, id, id, id, id, id, id], next: leaked };
}

for (let k = 0; k < capacity; k++) remember(n++);

// 100 ticks a second: 4 cache misses and one leaked entry each.
setInterval(() => {
  for (let k = 0; k < 4; k++) remember(n++);
  keepForever(n);
}, 10);
console.error("node target ready");
