// A TypeScript worker whose compiled output needs its compiler's helpers:
// object spread and async functions, compiled for an older target (esbuild
// --target=es2017: __spreadValues, __defNormalProp; tsc --target ES5:
// __awaiter, __generator, __spreadArray). The helpers have no place in the
// source, so no source map describes them: heapprof must count them quietly,
// not warn that the map is stale.
interface Item {
  id: number;
  name: string;
  tags: string[];
}

const store: Item[] = [];

async function load(id: number): Promise<Item> {
  await null;
  return { id, name: `item-${id}`, tags: ['a', 'b'] };
}

function decorate(item: Item, extra: Record<string, unknown>): Item {
  return { ...item, ...extra, tags: [...item.tags, 'decorated'] };
}

export default {
  async fetch(request: Request): Promise<Response> {
    const id = store.length;
    const item = await load(id);
    const out = decorate(item, { url: request.url, at: id });
    if (store.length < 3000) store.push(out);
    return new Response(JSON.stringify(out), { headers: { 'content-type': 'application/json' } });
  },
};
