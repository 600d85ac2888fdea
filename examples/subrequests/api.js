// A stand-in for the pricing API that worker.js calls with fetch():
//   heapprof run worker.js --fetch-handler api.js
// heapprof's runtime has no network; this module's fetch(request) answers
// every subrequest of the worker with a Response, inside the worker's isolate.
const cents = { 'SKU-1': 1250, 'SKU-2': 399, 'SKU-3': 18900 };

export default {
  async fetch(request) {
    const url = new URL(request.url);
    if (url.hostname !== 'prices.internal') return new Response('no route to ' + url.hostname, { status: 502 });
    if (request.headers.get('authorization') !== 'Bearer demo-token') return new Response('unauthorized', { status: 401 });
    const sku = url.pathname.slice(1);
    if (!(sku in cents)) return Response.json({ error: 'no such sku: ' + sku }, { status: 404 });
    const { currency } = await request.json();
    return Response.json({ sku, currency, cents: cents[sku] });
  },
};
