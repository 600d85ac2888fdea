// prometheus-leak.js: an API worker with a Prometheus-style metrics client
// that is "disabled" (METRICS_ENABLED is not set, so /metrics exports
// nothing) but still records every request into its in-memory registry.
//
// What the profile should show:
//   inuse_space: `observe` (Histogram.prototype.observe, below) on top. The
//     registry keeps one series per distinct label set, and the label set has
//     the raw request path (with user and order ids) in it, so a new series is
//     created for most requests and none is ever read or dropped.
//   alloc_space: `observe` on top as well: building the series key and the
//     label copy for every request allocates more than the handlers do.
// Run:  heapprof run examples/workers/prometheus-leak.js
// Fix:  label by route template ("/api/users/:id"), not by path, and return
//       early from observe() when the registry is disabled.

// ---- a small Prometheus-style metrics client ----

class Histogram {
  constructor(name, help, labelNames, buckets) {
    this.name = name;
    this.help = help;
    this.labelNames = labelNames;
    this.buckets = buckets;
    this.series = new Map();  // label key -> { labels, counts, sum, count }
  }

  // Records one observation for a label set. Note what is missing: any check
  // of registry.enabled. Disabling the exporter does not stop the recording.
  observe(labels, value) {
    // Like popular clients: check the label names, then key the series by
    // the label pairs, escaped.
    for (const name in labels) {
      if (!this.labelNames.includes(name)) throw new Error(`unknown label "${name}" for ${this.name}`);
    }
    let key = '';
    for (const name of this.labelNames) {
      key += name + '="' + String(labels[name] ?? '').replace(/["\\\n]/g, '_') + '",';
    }
    let series = this.series.get(key);
    if (series === undefined) {
      const copy = {};
      for (const name of this.labelNames) copy[name] = String(labels[name] ?? '');
      series = { key, labels: copy, counts: new Array(this.buckets.length + 1).fill(0), sum: 0, count: 0 };
      this.series.set(key, series);
    }
    let bucket = 0;
    while (bucket < this.buckets.length && value > this.buckets[bucket]) bucket++;
    series.counts[bucket]++;
    series.sum += value;
    series.count++;
  }

  exposition() {
    const lines = [`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} histogram`];
    for (const { key, counts, sum, count } of this.series.values()) {
      let cumulative = 0;
      this.buckets.forEach((le, i) => {
        cumulative += counts[i];
        lines.push(`${this.name}_bucket{${key}le="${le}"} ${cumulative}`);
      });
      lines.push(`${this.name}_sum{${key.slice(0, -1)}} ${sum}`, `${this.name}_count{${key.slice(0, -1)}} ${count}`);
    }
    return lines.join('\n');
  }
}

class Registry {
  constructor({ enabled }) {
    this.enabled = enabled;
    this.metrics = [];
  }
  histogram(name, help, labelNames, buckets = [5, 10, 25, 50, 100, 250, 500, 1000]) {
    const metric = new Histogram(name, help, labelNames, buckets);
    this.metrics.push(metric);
    return metric;
  }
  // The only place `enabled` is looked at.
  exposition() {
    return this.enabled ? this.metrics.map(m => m.exposition()).join('\n') + '\n' : '';
  }
}

// ---- the worker ----

let registry = null;
let requestDuration = null;

function metricsFor(env) {
  if (registry === null) {
    registry = new Registry({ enabled: env.METRICS_ENABLED === 'true' });
    requestDuration = registry.histogram(
      'http_request_duration_ms', 'Request latency by route',
      ['method', 'host', 'path', 'query', 'status', 'content_type', 'cache', 'country', 'colo', 'user_agent']);
  }
  return registry;
}

function userProfile(id) {
  return { id, name: `user-${id}`, plan: id % 3 === 0 ? 'pro' : 'free', teams: [id % 17, id % 23] };
}

function orderSummary(id, withItems) {
  const order = { id, status: id % 5 === 0 ? 'shipped' : 'open', total: (id % 997) / 10 };
  if (withItems) order.items = [{ sku: `SKU-${id % 5000}`, qty: 1 + (id % 3) }];
  return order;
}

async function route(request, url) {
  const parts = url.pathname.split('/').filter(Boolean);
  if (parts[0] === 'health') return new Response('ok');
  if (parts[0] === 'static') return new Response('/* asset */', { headers: { 'cache-control': 'max-age=3600' } });
  if (parts[0] !== 'api') return new Response('not found', { status: 404 });
  switch (parts[1]) {
    case 'users':
      return Response.json(userProfile(Number(parts[2])));
    case 'orders':
      if (request.method === 'POST') {
        const order = await request.json();
        return Response.json({ accepted: true, items: order.items.length }, { status: 201 });
      }
      return Response.json(orderSummary(Number(parts[2]), url.searchParams.get('include') === 'items'));
    case 'search':
      return Response.json({ q: url.searchParams.get('q'), page: Number(url.searchParams.get('page') ?? 1), hits: [] });
    default:
      return new Response('not found', { status: 404 });
  }
}

export default {
  async fetch(request, env, ctx) {
    const metrics = metricsFor(env);
    const url = new URL(request.url);
    if (url.pathname === '/metrics') {
      const body = metrics.exposition();
      return body ? new Response(body) : new Response('metrics disabled', { status: 404 });
    }
    const started = Date.now();
    const response = await route(request, url);
    requestDuration.observe({
      method: request.method,
      host: url.hostname,
      path: url.pathname,
      query: url.search,
      status: response.status,
      content_type: response.headers.get('content-type') || 'text/plain',
      cache: response.headers.has('cache-control') ? 'public' : 'none',
      country: request.headers.get('cf-ipcountry'),
      colo: (request.headers.get('cf-ray') || '').split('-')[1],
      user_agent: request.headers.get('user-agent'),
    }, Date.now() - started);
    return response;
  },
};
