// A worker that prices a cart through a subrequest to an internal API.
//   heapprof run worker.js --fetch-handler api.js
// Without --fetch-handler, fetch() rejects (heapprof's runtime has no network)
// and every request fails with that message.
const skus = ['SKU-1', 'SKU-2', 'SKU-3'];

async function price(sku) {
  const upstream = await fetch('https://prices.internal/' + sku, {
    method: 'POST',
    headers: { authorization: 'Bearer demo-token', 'content-type': 'application/json' },
    body: JSON.stringify({ currency: 'EUR' }),
  });
  if (!upstream.ok) throw new Error('the pricing API answered ' + upstream.status + ': ' + (await upstream.text()));
  return upstream.json();
}

export default {
  async fetch(request) {
    const url = new URL(request.url);
    const sku = url.searchParams.get('sku') || skus[url.pathname.length % skus.length];
    const { cents, currency } = await price(sku);
    return Response.json({ sku, price: (cents / 100).toFixed(2) + ' ' + currency });
  },
};
