// @sentry/cloudflare, Sentry's SDK for Workers, around a small API:
// withSentry() instruments the fetch handler; each request gets its own
// isolation scope through node:async_hooks' AsyncLocalStorage, so tags,
// user, breadcrumbs and contexts set in one request, across awaits and
// timers and while other requests are in flight, land on that request's
// events only. Events leave through the SDK's fetch transport as real
// subrequests, answered by fetch-handler.js; beforeSend keeps a summary of
// each event (no ids, timestamps or stack frames), and a route answers with
// the summaries once Sentry.flush() has sent them.
import * as Sentry from '@sentry/cloudflare';

const captured = [];
function summarize(event) {
  const exception = event.exception?.values?.[0];
  return {
    level: event.level ?? null,
    message: event.message ?? event.logentry?.message ?? null,
    exception: exception ? { type: exception.type, value: exception.value, handled: exception.mechanism?.handled ?? null } : null,
    tags: event.tags ?? {},
    user: event.user ?? null,
    extra: event.extra ?? null,
    release: event.release ?? null,
    environment: event.environment ?? null,
    transaction: event.transaction ?? null,
    breadcrumbs: (event.breadcrumbs ?? []).map(b => `${b.category ?? ''}:${b.message ?? ''}`),
    request: event.request ? { method: event.request.method, url: event.request.url } : null,
    sdk: event.sdk?.name ?? null,
  };
}

const tick = ms => new Promise(resolve => setTimeout(resolve, ms));

// A request's work with its own scope data, over awaits and timers.
async function checkout(id, delay) {
  Sentry.setTag('order', id);
  Sentry.setUser({ id: 'user-' + id });
  Sentry.addBreadcrumb({ category: 'cart', message: 'opened ' + id });
  await tick(delay);
  Sentry.addBreadcrumb({ category: 'cart', message: 'paid ' + id });
  await null;
  Sentry.captureMessage('checkout ' + id, 'info');
}

// Retained on purpose: the planted culprit of tests/cli (heapprof run
// names it as the top of in-use).
const sessions = [];
function retainSession(request) {
  const session = { url: request.url, items: [] };
  for (let i = 0; i < 256; i++) session.items.push({ sku: 'sku-' + i, price: i * 1.5, note: 'item ' + i + ' of ' + session.url });
  sessions.push(session);
  return sessions.length;
}

const routes = {
  '/': async () => new Response('shop is up'),
  '/capture': async request => {
    Sentry.setTag('route', 'capture');
    Sentry.setExtra('attempt', 1);
    Sentry.addBreadcrumb({ category: 'auth', message: 'signed in', level: 'info' });
    try {
      JSON.parse('{bad');
    } catch (error) {
      Sentry.captureException(error);
    }
    Sentry.captureException(new TypeError('card declined'), { tags: { code: 'E42' } });
    return null;
  },
  '/message': async () => {
    Sentry.withScope(scope => {
      scope.setTag('scoped', 'yes');
      scope.setLevel('warning');
      Sentry.captureMessage('inside withScope');
    });
    Sentry.captureMessage('outside withScope', 'error');
    return null;
  },
  '/concurrent': async () => {
    // Three isolation scopes in flight at once, finishing out of order.
    await Promise.all([['a', 6], ['b', 2], ['c', 4]].map(([id, delay]) =>
      Sentry.withIsolationScope(() => checkout(id, delay))));
    return null;
  },
  '/nested': async () => {
    Sentry.setTag('level', 'request');
    await Sentry.withIsolationScope(async () => {
      Sentry.setTag('level', 'isolated');
      await tick(3);
      await Sentry.withScope(async scope => {
        scope.setTag('inner', 'scope');
        await tick(1);
        Sentry.captureMessage('deep');
      });
      Sentry.captureMessage('isolated');
    });
    await tick(1);
    Sentry.captureMessage('request');
    return null;
  },
  '/session': async request => new Response('sessions: ' + retainSession(request)),
  '/throw': async () => { throw new RangeError('unhandled in handler'); },
};

export default Sentry.withSentry(
  env => ({
    dsn: 'https://0123456789abcdef0123456789abcdef@o1.ingest.sentry.example.com/42',
    release: 'shop@2.0.0',
    environment: 'conformance',
    tracesSampleRate: 0,
    beforeSend(event) {
      captured.push(summarize(event));
      return event;
    },
  }),
  {
    async fetch(request, env, ctx) {
      const route = routes[new URL(request.url).pathname];
      if (!route) return new Response('not found', { status: 404 });
      captured.length = 0;
      const response = await route(request);
      if (response) return response;
      await Sentry.flush(2000);
      return Response.json(captured);
    },
  },
);
