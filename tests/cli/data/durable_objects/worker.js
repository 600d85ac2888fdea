// Two Durable Objects of one class, reached in turn: STORES:leaky keeps a
// record of every request it gets (a leak in its own isolate), STORES:quiet
// makes records of the same size elsewhere (scratchRecord) and drops them.
// The worker keeps a count.
import { DurableObject } from 'cloudflare:workers';

function leakRecord(n) {
  const fields = [];
  for (let i = 0; i < 64; i++) fields.push({ n, i, text: `record ${n} field ${i}` });
  return fields;
}

function scratchRecord(n) {
  const fields = [];
  for (let i = 0; i < 64; i++) fields.push({ n, i, text: `record ${n} field ${i}` });
  return fields.length;
}

export class Store extends DurableObject {
  kept = [];
  remember(n) {
    if (this.ctx.id.name === 'leaky') {
      this.kept.push(leakRecord(n));
      return this.kept.length;
    }
    return scratchRecord(n);
  }
}

let served = 0;
export default {
  async fetch(request, env) {
    const n = served++;
    const name = n % 2 === 0 ? 'leaky' : 'quiet';
    return new Response(String(await env.STORES.getByName(name).remember(n)));
  },
};
