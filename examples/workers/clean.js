// clean.js: a well-behaved API worker, for comparison with the others. It
// parses the request, renders a small JSON body and keeps only a bounded
// cache (at most 256 entries) between requests.
//
// What the profile should show:
//   inuse_space: under 1 MiB, however many requests are served: the bounded
//     cache (`cacheUser`, often inlined into `fetch`) and little else.
//   alloc_space: spread over the request path (URL parsing, JSON rendering,
//     Response objects); no single function dominates the way `observe`
//     does in prometheus-leak.js.
// Run:  heapprof run examples/workers/clean.js

const CACHE_LIMIT = 256;
const userCache = new Map();

function cacheUser(id) {
  let user = userCache.get(id);
  if (user === undefined) {
    user = { id, name: `user-${id}`, plan: id % 3 === 0 ? 'pro' : 'free' };
    userCache.set(id, user);
    if (userCache.size > CACHE_LIMIT) userCache.delete(userCache.keys().next().value);
  }
  return user;
}

function renderJson(data, status = 200) {
  return new Response(JSON.stringify(data), { status, headers: { 'content-type': 'application/json' } });
}

export default {
  async fetch(request, env, ctx) {
    const url = new URL(request.url);
    const parts = url.pathname.split('/').filter(Boolean);
    if (parts[0] === 'health') return new Response('ok');
    if (parts[1] === 'users') return renderJson(cacheUser(Number(parts[2]) % 1000));
    if (parts[1] === 'orders' && request.method === 'POST') {
      const order = await request.json();
      return renderJson({ accepted: true, items: order.items.length }, 201);
    }
    if (parts[1] === 'search') return renderJson({ q: url.searchParams.get('q'), hits: [] });
    return renderJson({ path: url.pathname });
  },
};
