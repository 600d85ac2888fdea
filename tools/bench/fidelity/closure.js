// Fidelity case: a closure made by a factory keeps every sample it sees.
// Culprit: trackLatency (the returned closure, inuse_space).
function makeTracker() {
  const samples = [];
  return function trackLatency(route, ms) {
    samples.push({ route, ms, buckets: [ms < 10, ms < 100, ms < 1000] });
  };
}

const track = makeTracker();

export default {
  fetch(request) {
    // The caller keeps nothing of its own: a kept request.url would be a copy
    // charged to fetch (as in workerd), and its sampling noise would blur how
    // much of the closure's bytes optimization moves to fetch.
    const length = request.url.length;
    track(length % 7, length % 97);
    return new Response('ok');
  },
};
