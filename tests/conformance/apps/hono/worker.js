// A Hono API with the cors, etag and jwt middlewares: JSON CRUD, queries,
// form bodies, cookies, redirects, bytes, 404/401/500 and CORS preflights.
import { Hono } from 'hono';
import { cors } from 'hono/cors';
import { etag } from 'hono/etag';
import { jwt } from 'hono/jwt';
import { setCookie, getCookie } from 'hono/cookie';
import { HTTPException } from 'hono/http-exception';
import { basicAuth } from 'hono/basic-auth';
import { bodyLimit } from 'hono/body-limit';
import { secureHeaders } from 'hono/secure-headers';
import { prettyJSON } from 'hono/pretty-json';
import { csrf } from 'hono/csrf';
import { stream, streamText, streamSSE } from 'hono/streaming';

const app = new Hono();
app.use('/api/*', cors({
  origin: ['https://app.example.com', 'https://admin.example.com'],
  allowMethods: ['GET', 'POST', 'PUT', 'DELETE'],
  allowHeaders: ['Content-Type', 'Authorization'],
  exposeHeaders: ['X-Total-Count'],
  maxAge: 600,
  credentials: true,
}));
app.use('/static/*', etag());
app.use('/admin/*', jwt({ secret: 'conformance-secret', alg: 'HS256' }));
app.use('/ops/*', basicAuth({ username: 'ops', password: 'hunter2' }));
app.use('/upload/*', bodyLimit({ maxSize: 64, onError: c => c.json({ error: 'too large' }, 413) }));
app.use('/upload/*', csrf({ origin: 'https://app.example.com' }));
app.use('/secure/*', secureHeaders());
app.use('/pretty/*', prettyJSON());

const items = new Map([
  [1, { id: 1, name: 'Teapot', price: 18.5, tags: ['kitchen'] }],
  [2, { id: 2, name: 'Kettle', price: 32, tags: ['kitchen', 'electric'] }],
]);
let nextId = 3;

app.get('/', c => c.text('hono conformance app'));
app.get('/api/items', c => {
  c.header('X-Total-Count', String(items.size));
  return c.json([...items.values()]);
});
app.get('/api/items/:id{[0-9]+}', c => {
  const item = items.get(Number(c.req.param('id')));
  return item ? c.json(item) : c.json({ error: 'no such item' }, 404);
});
app.post('/api/items', async c => {
  let body;
  try {
    body = await c.req.json();
  } catch {
    throw new HTTPException(400, { message: 'the body is not JSON' });
  }
  if (typeof body.name !== 'string' || typeof body.price !== 'number') {
    return c.json({ error: 'name (string) and price (number) are required', got: body }, 422);
  }
  const item = { id: nextId++, name: body.name, price: body.price, tags: body.tags ?? [] };
  items.set(item.id, item);
  return c.json(item, 201, { Location: `/api/items/${item.id}` });
});
app.put('/api/items/:id{[0-9]+}', async c => {
  const id = Number(c.req.param('id'));
  if (!items.has(id)) return c.json({ error: 'no such item' }, 404);
  const item = { ...items.get(id), ...(await c.req.json()), id };
  items.set(id, item);
  return c.json(item);
});
app.delete('/api/items/:id{[0-9]+}', c => {
  return items.delete(Number(c.req.param('id'))) ? c.body(null, 204) : c.json({ error: 'no such item' }, 404);
});
app.get('/api/search', c => c.json({
  q: c.req.query('q') ?? null,
  tags: c.req.queries('tag') ?? [],
  page: Number(c.req.query('page') ?? '1'),
  found: [...items.values()].filter(i => i.name.toLowerCase().includes((c.req.query('q') ?? '').toLowerCase())).map(i => i.id),
}));
app.post('/form', async c => c.json(await c.req.parseBody()));
app.get('/static/app.css', c => c.body('body { margin: 0; font: 16px/1.4 sans-serif; }\n', 200, { 'Content-Type': 'text/css; charset=utf-8' }));
app.get('/static/logo.bin', c => c.body(new Uint8Array([0, 1, 2, 127, 128, 254, 255]), 200, { 'Content-Type': 'application/octet-stream' }));
app.get('/admin/me', c => c.json({ payload: c.get('jwtPayload') }));
app.get('/login', c => {
  setCookie(c, 'session', 'abc123', { path: '/', httpOnly: true, secure: true, sameSite: 'Strict', maxAge: 3600 });
  setCookie(c, 'theme', 'dark');
  return c.redirect('/welcome', 302);
});
app.get('/welcome', c => c.text(`welcome back, session ${getCookie(c, 'session') ?? 'none'}, theme ${getCookie(c, 'theme') ?? 'light'}`));
app.get('/old', c => c.redirect('https://example.com/new?from=old', 301));
app.get('/whoami', c => c.json({ host: c.req.header('host') ?? null, ua: c.req.header('User-Agent') ?? null, url: c.req.url }));
app.get('/unicode', c => c.text('Grüße, 世界 — ✓'));
app.get('/boom', () => { throw new Error('the database is down'); });
app.all('/teapot', () => { throw new HTTPException(418, { message: "I'm a teapot" }); });

app.get('/ops/status', c => c.json({ ok: true, user: 'ops' }));
app.post('/upload/raw', async c => {
  const bytes = new Uint8Array(await c.req.arrayBuffer());
  const blob = await c.req.blob();
  return c.json({ length: bytes.length, first: bytes[0] ?? null, last: bytes[bytes.length - 1] ?? null, blobType: blob.type, blobSize: blob.size });
});
app.post('/upload/text', async c => c.text(`${(await c.req.text()).toUpperCase()} (${c.req.header('content-type') ?? 'no type'})`));
app.get('/secure/page', c => c.html('<h1>secure</h1>'));
app.get('/pretty/data', c => c.json({ nested: { list: [1, 2, 3], ok: true } }));
app.get('/stream/text', c => streamText(c, async s => {
  for (const word of ['one', 'two', 'three']) {
    await s.writeln(word);
    await s.sleep(1);
  }
}));
app.get('/stream/bytes', c => stream(c, async s => {
  await s.write(new Uint8Array([104, 105]));
  await s.write(' there');
}));
app.get('/stream/sse', c => streamSSE(c, async s => {
  for (let id = 1; id <= 2; id++) await s.writeSSE({ event: 'tick', id: String(id), data: JSON.stringify({ n: id }) });
}));
app.post('/echo', c => new Response(c.req.raw.body, { headers: { 'content-type': c.req.header('content-type') ?? 'application/octet-stream' } }));
app.post('/echo/transform', c => {
  const upper = new TransformStream({ transform(chunk, controller) { controller.enqueue(new TextEncoder().encode(new TextDecoder().decode(chunk).toUpperCase())); } });
  return new Response(c.req.raw.body.pipeThrough(upper));
});
// A worker may not change the request it received, nor a redirect: workerd throws.
app.get('/tag-request', c => {
  try {
    c.req.raw.headers.set('x-tagged', '1');
    return c.text('tagged');
  } catch (e) {
    return c.json({ error: `${e.name}: ${e.message}`, copy: new Request(c.req.raw).headers.has('x-tagged') }, 500);
  }
});
app.get('/go', () => {
  const response = Response.redirect('https://example.com/target', 307);
  try {
    response.headers.set('x-extra', '1');
  } catch (e) {
    return new Response(e.message, { status: 500 });
  }
  return response;
});

app.notFound(c => c.json({ error: 'no route', method: c.req.method, path: c.req.path }, 404));
app.onError((err, c) => {
  if (err instanceof HTTPException) return err.getResponse();
  return c.json({ error: err.message }, 500);
});

export default app;
