// @microlabs/otel-cf-workers, OpenTelemetry tracing for Workers, around a
// small API: instrument() wraps the fetch handler in a span, and the routes
// open child spans of their own (startActiveSpan) across awaits and timers;
// the active span follows the code through node:async_hooks'
// AsyncLocalStorage (its context manager binds EventEmitters too). At each
// request's end the library exports its spans as OTLP JSON through fetch()
// to the collector (fetch-handler.js); the app keeps a summary of each
// exported span (names, parents, attributes: no ids or times), encodes
// trace ids with Buffer, and /spans answers with the summaries of the
// requests before it (once their exports are done).
import { instrument } from '@microlabs/otel-cf-workers';
import { trace, context } from '@opentelemetry/api';
import { Buffer } from 'node:buffer';
import { EventEmitter } from 'node:events';

const collector = 'https://collector.example.com/v1/traces';
const exported = [];
const exports = [];  // the exporter's POSTs in flight
const realFetch = globalThis.fetch;
// Installed before instrument() reads fetch: the exporter's POSTs pass
// through here, and their spans are summarized before they go on.
globalThis.fetch = async (input, init) => {
  if (String(input) === collector) {
    const done = realFetch(input, init);
    exports.push(done.catch(() => {}));
    const body = JSON.parse(init.body);
    const spans = body.resourceSpans.flatMap(r => r.scopeSpans.flatMap(s => s.spans));
    const byId = new Map(spans.map(s => [s.spanId, s]));
    for (const span of spans) {
      const attributes = Object.fromEntries(span.attributes
        .filter(a => /^(app\.|http\.request\.method|http\.response\.status_code|url\.path)/.test(a.key))
        .map(a => [a.key, Object.values(a.value)[0]]));
      exported.push({
        name: span.name, kind: span.kind, parent: byId.get(span.parentSpanId)?.name ?? null,
        status: span.status?.code ?? null, attributes, events: (span.events ?? []).map(e => e.name),
        // Not how many traces one POST carried: the exporter may batch two
        // requests' spans when the second ends before the first's export
        // (workerd did, once, on a loaded machine).
        traceBytes: Buffer.from(span.traceId, 'hex').length, traceHex: /^[0-9a-f]{32}$/.test(span.traceId),
        service: body.resourceSpans[0].resource.attributes.find(a => a.key === 'service.name')?.value.stringValue ?? null,
      });
    }
    return done;
  }
  return realFetch(input, init);
};

const tick = ms => new Promise(resolve => setTimeout(resolve, ms));

// Retained on purpose: the planted culprit of tests/cli (heapprof run
// names it as the top of in-use).
const auditLog = [];
function keepAuditRecord(request) {
  const record = { url: request.url, lines: [] };
  for (let i = 0; i < 256; i++) record.lines.push({ step: 'step-' + i, cost: i * 1.5, detail: 'line ' + i + ' of ' + record.url });
  auditLog.push(record);
  return auditLog.length;
}
const tracer = trace.getTracer('shop');

// A span around fn, ended when fn settles.
function span(name, fn) {
  return tracer.startActiveSpan(name, async s => {
    try {
      return await fn(s);
    } finally {
      s.end();
    }
  });
}

const routes = {
  '/': async () => new Response('traced'),
  '/order': async request => {
    const id = new URL(request.url).searchParams.get('id') ?? 'none';
    const total = await span('load-cart', async s => {
      s.setAttribute('app.order', id);
      await tick(3);
      return span('price', async p => {
        await null;
        p.setAttribute('app.items', 3);
        p.addEvent('priced');
        return 42;
      });
    });
    await span('charge', async s => {
      await tick(1);
      s.setAttribute('app.total', total);
    });
    return Response.json({ id, total });
  },
  '/parallel': async () => {
    const names = await Promise.all(['a', 'b', 'c'].map((n, i) => span('task-' + n, async s => {
      await tick(3 - i);
      s.setAttribute('app.task', n);
      return trace.getActiveSpan() === s ? n : 'lost ' + n;
    })));
    return Response.json(names);
  },
  '/emitter': async () => {
    const emitter = new EventEmitter();
    const seen = [];
    await span('emit', async s => {
      emitter.on('tick', () => seen.push(trace.getActiveSpan() === s));
      await tick(1);
      emitter.emit('tick');
    });
    return Response.json(seen);
  },
  '/audit': async request => span('audit', async () => new Response('audit records: ' + keepAuditRecord(request))),
  '/spans': async () => {
    // The previous request's spans are exported after its response (in
    // waitUntil): in workerd that may still be under way.
    await scheduler.wait(100);
    await Promise.all(exports.splice(0));
    const list = exported.splice(0);
    return Response.json(list);
  },
  '/fail': async () => span('risky', async s => {
    s.recordException(new Error('bad input'));
    s.setStatus({ code: 2, message: 'bad input' });
    return new Response('failed politely', { status: 422 });
  }),
};

const handler = {
  async fetch(request, env, ctx) {
    const route = routes[new URL(request.url).pathname];
    if (!route) return new Response('not found', { status: 404 });
    return route(request);
  },
};

export default instrument(handler, () => ({
  exporter: { url: collector },
  service: { name: 'shop', version: '1.0.0' },
}));
