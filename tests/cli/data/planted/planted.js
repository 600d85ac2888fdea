// A conformance app (APP, replaced by answers_test.sh with the path of
// tests/conformance/apps/<app>/worker.js) with a planted culprit: every
// request first goes through plantedCulprit, which keeps ~3 KiB alive per
// request through V8 built-ins (padEnd, slice, JSON.stringify) and
// heapprof's runtime (Headers), then the framework answers it as in the
// conformance suite. The built-ins and the runtime allocate; the function
// that owns the memory is plantedCulprit.
import app from 'APP';

const kept = [];

function plantedCulprit(request) {
  const key = request.url.padEnd(2048, '#');
  const note = JSON.stringify({ n: kept.length, url: request.url, method: request.method });
  kept.push({ key: key.slice(0, 1600), note, headers: new Headers({ 'x-planted': note }) });
}

export default {
  async fetch(request, env, ctx) {
    plantedCulprit(request);
    return app.fetch(request, env, ctx);
  },
};
