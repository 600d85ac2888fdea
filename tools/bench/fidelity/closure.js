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
    track(request.url, request.url.length % 97);
    return new Response('ok');
  },
};
