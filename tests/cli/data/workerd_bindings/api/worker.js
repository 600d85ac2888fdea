// The api worker: its services bindings AUTH (the auth worker's default export) and ADMIN (its Admin entrypoint, over RPC), and a fetch() to the network, answered by handler.js under --fetch-handler.
export default {
  async fetch(request, env) {
    const user = new URL(request.url).searchParams.get('user') ?? 'ann';
    const verified = await (await env.AUTH.fetch(`https://auth.internal/verify?user=${user}`)).json();
    const role = await env.ADMIN.role(user);
    const price = await (await fetch('https://upstream.example/price?item=tea')).json();
    return Response.json({ verified, role, price });
  },
};
