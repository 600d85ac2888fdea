// Durable Objects of the current form (a class extending DurableObject from
// cloudflare:workers) reached through env.COUNTERS: RPC methods with
// structured-cloned arguments and results, errors rethrown across the stub,
// stub.fetch(), ctx.storage in memory, blockConcurrencyWhile in the
// constructor, and ten concurrent calls to one object that read, then write,
// its storage (the input gate keeps every increment).
import { DurableObject } from 'cloudflare:workers';

export class Counter extends DurableObject {
  constructor(ctx, env) {
    super(ctx, env);
    this.started = 0;
    ctx.blockConcurrencyWhile(async () => {
      this.started = (await ctx.storage.get('started')) ?? 0;
      await ctx.storage.put('started', this.started + 1);
    });
  }
  async increment(by = 1) {
    const n = ((await this.ctx.storage.get('n')) ?? 0) + by;
    await this.ctx.storage.put('n', n);
    return n;
  }
  async count() { return (await this.ctx.storage.get('n')) ?? 0; }
  identity() { return { id: this.ctx.id.toString(), name: this.ctx.id.name ?? null, started: this.started }; }
  echo(value) { return value; }
  fail(kind) {
    if (kind === 'type') throw new TypeError('the argument was of the wrong type');
    if (kind === 'range') throw new RangeError('out of range: ' + kind);
    if (kind === 'custom') { const e = new Error('with a code'); e.code = 'E_CUSTOM'; throw e; }
    if (kind === 'string') throw 'a thrown string';
    return 'no failure';
  }
  async rejectLater() { await null; throw new SyntaxError('rejected after an await'); }
  async storage(op) {
    const s = this.ctx.storage;
    switch (op) {
      case 'put-many':
        await s.put({ 'k:b': 2, 'k:a': 1, 'k:c': { nested: [1, 2, 3] }, 'other': 'x', 'k:\u00e9': 'accent' });
        return 'ok';
      case 'get-many': return [...(await s.get(['k:a', 'k:c', 'missing']))];
      case 'list': return [...(await s.list())].map(([k]) => k);
      case 'list-prefix': return [...(await s.list({ prefix: 'k:' }))];
      case 'list-reverse-limit': return [...(await s.list({ prefix: 'k:', reverse: true, limit: 2 }))];
      case 'list-range': return [...(await s.list({ start: 'k:b', end: 'other' }))].map(([k]) => k);
      case 'list-start-after': return [...(await s.list({ startAfter: 'k:b' }))].map(([k]) => k);
      case 'delete-one': return [await s.delete('k:a'), await s.delete('k:a')];
      case 'delete-many': return await s.delete(['k:b', 'k:c', 'nope']);
      case 'copy': {
        const value = { list: [1] };
        await s.put('obj', value);
        value.list.push(2);
        const got = await s.get('obj');
        got.list.push(3);
        return [(await s.get('obj')).list, value.list];
      }
      case 'types': {
        await s.put('types', { d: new Date(0), m: new Map([[1, 'one']]), set: new Set(['s']), bytes: new Uint8Array([1, 2]), big: 10n, re: /x/g });
        const t = await s.get('types');
        return [t.d instanceof Date, t.d.getTime(), t.m.get(1), t.set.has('s'), t.bytes[1], typeof t.big, String(t.re)];
      }
      case 'transaction': {
        await s.put('tx', 'before');
        const inner = await s.transaction(async txn => {
          await txn.put('tx', 'inside');
          const seen = await txn.get('tx');
          txn.rollback();
          return seen;
        });
        const committed = await s.transaction(async txn => { await txn.put('tx2', 'kept'); return 'done'; });
        return [inner, await s.get('tx'), committed, await s.get('tx2')];
      }
      case 'delete-all': {
        await s.deleteAll();
        return [...(await s.list())].length;
      }
      default: throw new Error('unknown storage op ' + op);
    }
  }
  async fetch(request) {
    const url = new URL(request.url);
    const body = request.method === 'POST' ? await request.text() : '';
    const n = await this.increment();
    return new Response(JSON.stringify({ path: url.pathname, method: request.method, body, n, header: request.headers.get('x-test') }), {
      status: url.pathname.endsWith('/teapot') ? 418 : 200,
      headers: { 'content-type': 'application/json', 'x-object': this.ctx.id.name ?? 'unnamed' },
    });
  }
}

const json = value => new Response(JSON.stringify(value, null, 1), { headers: { 'content-type': 'application/json' } });
const describe = e => (e instanceof Error
  ? { name: e.name, message: e.message, isTypeError: e instanceof TypeError, isRangeError: e instanceof RangeError, code: e.code ?? null }
  : { thrown: typeof e, value: String(e) });

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const [, route, name = 'default', arg = ''] = url.pathname.split('/');
    const stub = env.COUNTERS.getByName(name);
    switch (route) {
      case 'increment': return json(await stub.increment(Number(arg || 1)));
      case 'count': return json(await env.COUNTERS.get(env.COUNTERS.idFromName(name)).count());
      case 'identity': return json({ fromStub: await stub.identity(), idHex: env.COUNTERS.idFromName(name).toString() });
      case 'ids': {
        const a = env.COUNTERS.idFromName(name);
        const b = env.COUNTERS.idFromString(a.toString());
        const unique = env.COUNTERS.newUniqueId();
        const errors = [];
        for (const bad of ['zz', 'ab'.repeat(32), a.toString().toUpperCase()]) {
          try { env.COUNTERS.idFromString(bad); errors.push('accepted'); } catch (e) { errors.push(describe(e)); }
        }
        return json({
          name: a.name, hex: a.toString(), roundTrip: b.toString() === a.toString(), equals: a.equals(b), fromStringName: b.name ?? null,
          uniqueLength: unique.toString().length, uniqueName: unique.name ?? null, uniqueDiffers: unique.toString() !== a.toString(),
          hexPattern: /^[0-9a-f]{64}$/.test(a.toString()), stubId: stub.id.toString() === a.toString(), stubName: stub.name ?? null, errors,
        });
      }
      case 'echo': {
        const value = { text: 'caf\u00e9', n: 1.5, nested: { list: [1, 'two', null, true] }, date: new Date(86400000), map: new Map([['k', 1]]), bytes: new Uint8Array([7, 8, 9]), undef: undefined };
        const back = await stub.echo(value);
        return json({ same: back === value, text: back.text, n: back.n, nested: back.nested, date: back.date.toISOString(), map: [...back.map], bytes: [...back.bytes], hasUndef: 'undef' in back });
      }
      case 'fail': {
        try { return json({ result: await stub.fail(arg) }); } catch (e) { return json(describe(e)); }
      }
      case 'reject': {
        try { await stub.rejectLater(); return json('resolved'); } catch (e) { return json(describe(e)); }
      }
      case 'missing-method': {
        try { await stub.noSuchMethod(); return json('called'); } catch (e) { return json(describe(e)); }
      }
      case 'storage': return json(await stub.storage(arg));
      case 'concurrent': {
        const results = await Promise.all(Array.from({ length: 10 }, () => stub.increment()));
        return json({ results, count: await stub.count() });
      }
      case 'fetch': {
        const init = request.method === 'POST' ? { method: 'POST', body: await request.text() } : {};
        const response = await stub.fetch('https://object.internal/' + arg, { ...init, headers: { 'x-test': 'from-worker' } });
        return new Response(await response.text(), { status: response.status, headers: { 'content-type': response.headers.get('content-type'), 'x-object': response.headers.get('x-object') } });
      }
      case 'forward': {
        const response = await stub.fetch(request);
        return new Response(response.body, response);
      }
      case 'isolated': {
        const a = await env.COUNTERS.getByName('iso-a').increment(5);
        const b = await env.COUNTERS.getByName('iso-b').increment(7);
        return json({ a, b, aAgain: await env.COUNTERS.getByName('iso-a').count() });
      }
      default: return new Response('no route ' + url.pathname, { status: 404 });
    }
  },
};
