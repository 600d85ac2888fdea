// A shop of Durable Objects configured through migrations: Cart (from the
// first migration), Ledger (a SQLite-backed class of the second, used
// through its key-value storage API), and Legacy, created by the first and
// deleted by the third (no binding, no export). Carts keep their lines in
// storage and call the ledger over RPC; a cart also keeps every line it
// ever saw in memory: the planted culprit.
import { DurableObject } from 'cloudflare:workers';

export class Cart extends DurableObject {
  constructor(ctx, env) {
    super(ctx, env);
    this.seen = [];
  }
  // Retained on purpose: the planted culprit of tests/cli (heapprof names it
  // as the top of in-use).
  rememberLine(sku, qty) {
    const line = { sku, qty, history: [] };
    for (let i = 0; i < 256; i++) line.history.push({ step: i, label: 'step-' + i, note: 'event ' + i + ' of ' + sku });
    this.seen.push(line);
    return this.seen.length;
  }
  async add(sku, qty) {
    const lines = (await this.ctx.storage.get('lines')) ?? {};
    lines[sku] = (lines[sku] ?? 0) + qty;
    await this.ctx.storage.put('lines', lines);
    return { lines, remembered: this.rememberLine(sku, qty) };
  }
  async lines() { return (await this.ctx.storage.get('lines')) ?? {}; }
  async checkout(ledger) {
    const lines = await this.lines();
    const units = Object.values(lines).reduce((a, b) => a + b, 0);
    if (units === 0) throw new RangeError('the cart is empty');
    await this.ctx.storage.delete('lines');
    const entry = await this.env.LEDGER.getByName(ledger).record(this.ctx.id.name, units);
    return { units, entry };
  }
}

export class Ledger extends DurableObject {
  async record(cart, units) {
    const n = ((await this.ctx.storage.get('entries')) ?? 0) + 1;
    await this.ctx.storage.put({ entries: n, ['entry:' + String(n).padStart(4, '0')]: { cart, units } });
    return n;
  }
  async entries() { return [...(await this.ctx.storage.list({ prefix: 'entry:' }))]; }
}

const json = (value, status = 200) => Response.json(value, { status });

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const [, route, name = 'default', sku = '', qty = '1'] = url.pathname.split('/');
    switch (route) {
      case 'add': return json(await env.CARTS.getByName(name).add(sku, Number(qty)));
      case 'lines': return json(await env.CARTS.getByName(name).lines());
      case 'checkout':
        try {
          return json(await env.CARTS.getByName(name).checkout(url.searchParams.get('ledger') ?? 'main'));
        } catch (e) {
          return json({ error: e.name, message: e.message }, 409);
        }
      case 'ledger': return json(await env.LEDGER.getByName(name).entries());
      case 'bindings': return json(Object.keys(env).sort());
      default: return new Response('no route ' + url.pathname, { status: 404 });
    }
  },
};
