// startup-table.js: a redirect worker that compiles its whole rule table when
// the module loads: 100k legacy paths, each with its parsed target. Requests
// only look rules up, so after start-up the worker allocates little.
//
// What the profile should show:
//   with --from-start: `buildRedirectTable` on top of inuse_space (the table
//     is most of the isolate's heap) and of alloc_space.
//   without --from-start: `buildRedirectTable` does not appear at all. The
//     table was built before the window opened; an on-demand profile cannot
//     see start-up allocations.
// Run:  heapprof run --from-start examples/workers/startup-table.js
// Fix (if the table is too big for the isolate): load rules lazily per
//       prefix, or ship them precompiled in a compact form (one string, binary search).

const RULE_COUNT = 100000;

// Generated here; in real life this would be a bundled JSON file of rules.
function legacyPath(i) {
  return `/legacy/catalog/${(i * 7919) % 100000}/item-${i}.html`;
}

// A plain object keyed by path, as it would come out of a rules file.
function buildRedirectTable() {
  const table = Object.create(null);
  for (let i = 0; i < RULE_COUNT; i++) {
    const from = legacyPath(i);
    table[from] = {
      to: '/products/' + i,
      status: i % 10 === 0 ? 302 : 301,
      section: from.slice(0, from.indexOf('/', 17)),
      hits: 0,
    };
  }
  return table;
}

const redirects = buildRedirectTable();

export default {
  async fetch(request, env, ctx) {
    const url = new URL(request.url);
    const id = Number(url.pathname.split('/').pop()) || 0;
    const rule = redirects[legacyPath(id % RULE_COUNT)];
    if (rule === undefined) return new Response('not found', { status: 404 });
    rule.hits++;
    return new Response(null, { status: rule.status, headers: { location: url.origin + rule.to } });
  },
};
