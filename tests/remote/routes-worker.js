// A worker that answers only its own routes (anything else is 404), for
// driving `heapprof run` with a requests file in both runtimes. Deterministic:
// the same request gets the same body; /slow answers after 3 s, for
// --request-timeout.
function renderInvoice(id) {
  const lines = [];
  for (let i = 0; i < 200; i++) lines.push({ sku: `item-${id}-${i}`, qty: (i * 7) % 5 + 1, cents: (i * 131) % 9000 });
  const total = lines.reduce((sum, l) => sum + l.qty * l.cents, 0);
  return JSON.stringify({ id, lines, total });
}

function tokenizeQuery(q) {
  const words = [];
  for (let n = 0; n < 50; n++) words.push(...q.toLowerCase().split(/[^a-z0-9]+/).map(w => `${w}:${n}`));
  return words.join(' ');
}

async function acceptOrder(request) {
  const order = await request.json();
  const echo = [];
  for (let i = 0; i < 100; i++) echo.push({ ...order, seq: i });
  return Response.json({ accepted: order.items.length, copies: echo.length }, { status: 201 });
}

export default {
  async fetch(request) {
    const url = new URL(request.url);
    const invoice = /^\/invoices\/(\d+)$/.exec(url.pathname);
    if (invoice && request.method === 'GET') {
      return new Response(renderInvoice(invoice[1]), { headers: { 'content-type': 'application/json' } });
    }
    if (url.pathname === '/search' && request.method === 'GET') {
      return new Response(tokenizeQuery(url.searchParams.get('q') ?? ''), { headers: { 'x-url': request.url } });
    }
    if (url.pathname === '/orders' && request.method === 'POST') return acceptOrder(request);
    if (url.pathname === '/slow') {
      await new Promise(resolve => setTimeout(resolve, 3000));
      return new Response('slow');
    }
    return new Response('no such route', { status: 404 });
  },
};
