// Reserves items in the stock worker's Inventory objects (one per warehouse).
export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const [, warehouse, item] = url.pathname.split('/');
    const stub = env.INVENTORY.getByName(warehouse);
    return Response.json(await stub.reserve(item));
  },
};
