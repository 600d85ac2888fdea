// A worker with a KV namespace (wrangler.toml kv_namespaces), preloaded by --kv-data: each route one KV call.
export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const [, op, key = ''] = url.pathname.split('/').map(decodeURIComponent);
    switch (op) {
      case 'get': return Response.json({ value: await env.CACHE.get(key) });
      case 'json': return Response.json(await env.CACHE.get(key, 'json'));
      case 'put': await env.CACHE.put(key, await request.text(), { metadata: { by: 'test' }, expirationTtl: 3600 }); return Response.json('stored');
      case 'meta': { const { value, metadata } = await env.CACHE.getWithMetadata(key); return Response.json({ value, metadata }); }
      case 'list': return Response.json((await env.CACHE.list({ prefix: key })).keys.map(k => k.name));
      case 'delete': await env.CACHE.delete(key); return Response.json({ after: await env.CACHE.get(key) });
      case 'bulk': return Response.json([...(await env.CACHE.get(['greeting', 'missing']))]);
      case 'bulk-meta': return Response.json([...(await env.CACHE.getWithMetadata(['greeting', 'k new', 'missing'], 'text'))]);
    }
    return new Response('no such route', { status: 404 });
  },
};
