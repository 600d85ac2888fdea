// A worker whose handler fails on two routes, for heapprof run --runtime
// workerd's outcome report: the exception (message, stack mapped to this
// file) is the worker's own, not workerd's "500 Internal Server Error".
interface Order {
  sku: string;
  quantity: number;
}

function parseOrder(text: string): Order {
  const order = JSON.parse(text) as Order;
  if (typeof order.quantity !== 'number') {
    throw new TypeError(`order ${order.sku}: quantity must be a number`);
  }
  return order;
}

async function reserveStock(order: Order): Promise<number> {
  await Promise.resolve();
  throw new RangeError(`no stock left for ${order.sku}`);
}

export default {
  async fetch(request: Request): Promise<Response> {
    const url = new URL(request.url);
    switch (url.pathname) {
      case '/parse':
        return Response.json(parseOrder('{"sku": "tea", "quantity": "two"}'));
      case '/reserve':
        return Response.json(await reserveStock({ sku: 'kettle', quantity: 1 }));
      case '/invalid':
        return Response.json({ error: 'quantity missing' }, { status: 422 });
      case '/ok':
        return Response.json({ ok: true });
    }
    return new Response('no such route', { status: 404 });
  },
};
