// @tsndr/cloudflare-worker-router: its CORS helper, global and per-route
// middleware (a bearer check), params, queries, and its parsed bodies.
import { Router } from '@tsndr/cloudflare-worker-router';

const router = new Router();
router.cors({ allowOrigin: 'https://app.example.com', allowMethods: 'GET, POST, PUT, DELETE', allowHeaders: 'content-type, authorization', maxAge: 600 });

router.use(({ req }) => {
  if (req.url.includes('/private/') && req.headers.get('authorization') !== 'Bearer conformance-token') {
    return Response.json({ error: 'unauthorized' }, { status: 401, headers: { 'www-authenticate': 'Bearer' } });
  }
});

const users = new Map([[1, { id: 1, name: 'Ada' }], [2, { id: 2, name: 'Grace' }]]);

router.get('/', () => new Response('tsndr router conformance app'));
router.get('/users', ({ req }) => Response.json({ users: [...users.values()], query: req.query }));
router.get('/users/:id', ({ req }) => {
  const user = users.get(Number(req.params.id));
  return user ? Response.json(user) : Response.json({ error: 'no such user' }, { status: 404 });
});
router.post('/users', async ({ req }) => {
  const body = req.body;
  if (typeof body !== 'object' || body === null || typeof body.name !== 'string') {
    return Response.json({ error: 'a user needs a name', got: body ?? null }, { status: 400 });
  }
  const user = { id: users.size + 1, name: body.name };
  users.set(user.id, user);
  return Response.json(user, { status: 201 });
});
router.put('/users/:id', ({ req }) => Response.json({ id: Number(req.params.id), body: req.body }));
router.delete('/users/:id', ({ req }) => (users.delete(Number(req.params.id)) ? new Response(null, { status: 204 }) : Response.json({ error: 'no such user' }, { status: 404 })));
router.get('/private/stats', () => Response.json({ users: users.size }));
router.get('/echo/:a/:b', ({ req }) => Response.json({ params: req.params, method: req.method }));
router.get('/fail', () => { throw new Error('handler failed'); });

export default {
  async fetch(request, env, ctx) {
    return router.handle(request, env, ctx);
  },
};
