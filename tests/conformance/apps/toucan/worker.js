// toucan-js, Sentry's client for Workers, inside a small API: tags, user,
// breadcrumbs, captured exceptions and messages, the request data
// integration. Events leave through toucan's fetch transport as real
// subrequests, answered by fetch-handler.js (heapprof run --fetch-handler;
// workerd's globalOutbound service); toucan's `fetcher` option wraps fetch()
// only to keep a copy of each envelope and the endpoint's answer, so the app
// answers with what toucan sent: the envelope's deterministic fields (no
// event id, timestamp or stack frames).
import { Toucan } from 'toucan-js';

let pending = null;  // resolves with the next envelope and the endpoint's answer
const fetcher = async (url, init) => {
  const body = typeof init.body === 'string' ? init.body : new TextDecoder().decode(init.body);
  const response = await fetch(url, init);
  if (pending) {
    pending.resolve({ url: String(url), body, status: response.status, answer: await response.clone().json() });
    pending = null;
  }
  return response;
};
function nextEnvelope() {
  return new Promise(resolve => { pending = { resolve }; });
}

// The parts of a Sentry envelope that must not depend on the runtime's clock or randomness.
function summarize({ url, body, status, answer }) {
  const lines = body.split('\n').filter(Boolean).map(line => JSON.parse(line));
  const [, itemHeader, event] = lines;
  const exception = event.exception?.values?.[0];
  return {
    endpoint: url.replace(/sentry_key=[^&]+/, 'sentry_key=…'),
    item: itemHeader.type,
    level: event.level,
    message: event.message ?? null,
    exception: exception ? { type: exception.type, value: exception.value, handled: exception.mechanism?.handled ?? null } : null,
    tags: event.tags ?? {},
    user: event.user ?? null,
    release: event.release ?? null,
    environment: event.environment ?? null,
    breadcrumbs: (event.breadcrumbs ?? []).map(b => ({ category: b.category ?? null, message: b.message ?? null, level: b.level ?? null })),
    request: event.request ? { method: event.request.method, url: event.request.url, query: event.request.query_string ?? null } : null,
    sdk: event.sdk?.name ?? null,
    extra: event.extra ?? null,
    endpointAnswer: { status, ...answer },
  };
}

class PaymentError extends Error {
  constructor(message, code) { super(message); this.name = 'PaymentError'; this.code = code; }
}

export default {
  async fetch(request, env, ctx) {
    const sentry = new Toucan({
      dsn: 'https://0123456789abcdef0123456789abcdef@o1.ingest.sentry.example.com/42',
      context: ctx,
      request,
      release: 'shop@1.4.2',
      environment: 'conformance',
      requestDataOptions: { allowedHeaders: ['user-agent', 'x-request-id'], allowedSearchParams: /(.*)/ },
      transportOptions: { fetcher },
    });
    const url = new URL(request.url);
    sentry.setTag('route', url.pathname);
    sentry.setUser({ id: request.headers.get('x-user-id') ?? 'anonymous' });
    sentry.addBreadcrumb({ category: 'request', message: `${request.method} ${url.pathname}`, level: 'info' });
    try {
      if (url.pathname === '/checkout') {
        const order = await request.json();
        if (!(order.amount > 0)) throw new PaymentError(`invalid amount ${order.amount}`, 'E_AMOUNT');
        return Response.json({ ok: true, charged: order.amount });
      }
      if (url.pathname === '/message') {
        const sent = nextEnvelope();
        sentry.setExtra('query', Object.fromEntries(url.searchParams));
        sentry.captureMessage(url.searchParams.get('text') ?? 'hello', url.searchParams.get('level') ?? 'info');
        return Response.json(summarize(await sent));
      }
      if (url.pathname === '/') return new Response('toucan conformance app');
      return Response.json({ error: 'not found' }, { status: 404 });
    } catch (err) {
      const sent = nextEnvelope();
      sentry.captureException(err);
      return Response.json({ error: err.message, reported: summarize(await sent) }, { status: 500 });
    }
  },
};
