// An itty-router AutoRouter with its cors helper (preflight + corsify):
// JSON CRUD, params, queries, text and JSON formatting, StatusError, 404/500.
import { AutoRouter, StatusError, cors, error, json, status, text } from 'itty-router';

const { preflight, corsify } = cors({
  origin: ['https://app.example.com'],
  allowMethods: ['GET', 'POST', 'DELETE'],
  allowHeaders: ['content-type', 'authorization'],
  exposeHeaders: ['x-request-id'],
  maxAge: 3600,
  credentials: true,
});
const router = AutoRouter({ before: [preflight], finally: [corsify] });

const todos = new Map([[1, { id: 1, title: 'write tests', done: false }]]);
let nextId = 2;

router
  .get('/', () => text('itty-router conformance app'))
  .get('/todos', () => [...todos.values()])
  .get('/todos/:id', ({ id }) => todos.get(Number(id)) ?? error(404, `todo ${id} not found`))
  .post('/todos', async request => {
    const body = await request.json().catch(() => null);
    if (!body || typeof body.title !== 'string') return error(400, 'a todo needs a title');
    const todo = { id: nextId++, title: body.title, done: Boolean(body.done) };
    todos.set(todo.id, todo);
    return json(todo, { status: 201, headers: { 'x-request-id': request.headers.get('x-request-id') ?? 'none' } });
  })
  .delete('/todos/:id', ({ id }) => (todos.delete(Number(id)) ? status(204) : error(404)))
  .get('/search', ({ query }) => ({ query }))
  .get('/files/:name.:ext', ({ name, ext }) => ({ name, ext }))
  .get('/teapot', () => { throw new StatusError(418, 'short and stout'); })
  .get('/crash', () => { throw new Error('unexpected'); })
  .get('/empty', () => new Response(null, { status: 204 }));

export default { ...router };
