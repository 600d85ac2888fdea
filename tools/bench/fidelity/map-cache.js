// Fidelity case: a memoizing cache keyed by the full URL never evicts.
// Culprit: cacheResult (inuse_space).
const cache = new Map();

function cacheResult(key, value) {
  cache.set(key, { value, parts: key.split('/'), hits: [0] });
}

function compute(url) {
  return url.length * 31;
}

export default {
  fetch(request) {
    const key = request.url + '#' + cache.size;
    if (!cache.has(key)) cacheResult(key, compute(key));
    return new Response('ok');
  },
};
