// Inventory: a SQLite-backed Durable Object counting reservations per item.
import { DurableObject } from 'cloudflare:workers';

export class Inventory extends DurableObject {
  async reserve(item) {
    const n = ((await this.ctx.storage.get(item)) ?? 0) + 1;
    await this.ctx.storage.put(item, n);
    return { warehouse: this.ctx.id.name, item, reserved: n, sql: typeof this.ctx.storage.sql };
  }
}
export default { fetch: () => new Response('stock') };
