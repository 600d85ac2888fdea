// A tRPC v11 API (@trpc/server's fetch adapter) with zod input schemas:
// queries over GET (one and batched), mutations over POST, a middleware that
// reads a header into the context, input validation errors (400), a
// procedure that throws TRPCError NOT_FOUND (404) and one that throws a plain
// Error (500, tRPC's own answer), an unknown procedure, and a route outside
// the adapter.
import { initTRPC, TRPCError } from '@trpc/server';
import { fetchRequestHandler } from '@trpc/server/adapters/fetch';
import { z } from 'zod';

// isDev false: errors carry no stack (its text is the runtime's, not the app's).
const t = initTRPC.context().create({ isDev: false });

const authed = t.procedure.use(({ ctx, next }) => {
  if (!ctx.user) throw new TRPCError({ code: 'UNAUTHORIZED', message: 'sign in first' });
  return next({ ctx: { user: ctx.user } });
});

const items = new Map([
  ['1', { id: '1', name: 'Kettle', cents: 2500 }],
  ['2', { id: '2', name: 'Teapot', cents: 1800 }],
]);

// Retained on purpose: the planted culprit of tests/cli (heapprof names it
// as the top of in-use).
const trail = [];
function keepTrailEntry(path, input) {
  const entry = { path, input, marks: [] };
  for (let i = 0; i < 256; i++) entry.marks.push({ seq: i, at: 'mark-' + i, note: 'visit ' + i + ' of ' + path });
  trail.push(entry);
  return trail.length;
}

const appRouter = t.router({
  greeting: t.procedure.input(z.object({ name: z.string().min(1) })).query(({ input }) => ({ text: `hello ${input.name}` })),
  list: t.procedure.query(() => [...items.values()]),
  item: t.procedure.input(z.object({ id: z.string() })).query(({ input }) => {
    const item = items.get(input.id);
    if (!item) throw new TRPCError({ code: 'NOT_FOUND', message: `no item ${input.id}` });
    return item;
  }),
  quote: t.procedure.input(z.object({ ids: z.array(z.string()).max(10), coupon: z.string().optional() })).query(({ input }) => {
    const lines = input.ids.map(id => items.get(id)).filter(Boolean);
    const total = lines.reduce((sum, item) => sum + item.cents, 0);
    return { lines: lines.map(i => i.name), total, discounted: input.coupon === 'TEN' ? Math.round(total * 0.9) : total };
  }),
  whoami: authed.query(({ ctx }) => ({ user: ctx.user })),
  addItem: authed.input(z.object({ name: z.string().min(2), cents: z.number().int().positive() })).mutation(({ input }) => {
    const id = String(items.size + 1);
    return { id, ...input, stored: false };
  }),
  visit: t.procedure.input(z.object({ page: z.string() })).mutation(({ input }) => ({ visits: keepTrailEntry('visit', input) })),
  broken: t.procedure.query(() => { throw new Error('the procedure broke'); }),
});

export default {
  async fetch(request) {
    const url = new URL(request.url);
    if (!url.pathname.startsWith('/trpc/')) return new Response('not a tRPC path', { status: 404 });
    return fetchRequestHandler({
      endpoint: '/trpc',
      req: request,
      router: appRouter,
      createContext: ({ req }) => ({ user: req.headers.get('x-user') }),
      onError() {},
    });
  },
};
