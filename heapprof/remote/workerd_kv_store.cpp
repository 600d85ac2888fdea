// heapprof's KV store for workerd: a worker that a kvNamespace binding points
// at. workerd turns env.NS.get / put / delete / list / get([...]) into HTTP
// requests to the binding's service (GET, PUT, DELETE https://fake-host/<key,
// URL-encoded>?urlencoded=true, the metadata in a CF-KV-Metadata header,
// expiration or expiration_ttl in the query; GET /?prefix=&key_count_limit=
// &cursor= lists; POST /bulk/get {keys, type, withMetadata}); this one keeps
// the entries in memory for the run, preloaded from its env.ENTRIES (the
// --kv-data file's object).
#include "heapprof/remote/workerd_kv_store.h"

namespace heapprof::remote {

const char kWorkerdKvStore[] = R"js(// heapprof's in-memory KV store (heapprof run --runtime workerd).
const store = new Map();  // key -> { value: Uint8Array, metadata: string | null, expiration: number | null }
let loaded = false;
const encoder = new TextEncoder(), decoder = new TextDecoder();
const now = () => Date.now() / 1000;

function load(env) {
  if (loaded) return;
  loaded = true;
  for (const [key, value] of Object.entries(env.ENTRIES ?? {})) {
    store.set(key, { value: encoder.encode(String(value)), metadata: null, expiration: null });
  }
}

function live(key) {
  const entry = store.get(key);
  if (entry !== undefined && entry.expiration !== null && entry.expiration <= now()) {
    store.delete(key);
    return undefined;
  }
  return entry;
}

function typed(entry, type) {
  const text = decoder.decode(entry.value);
  return type === 'json' ? JSON.parse(text) : text;
}

function list(url) {
  const prefix = url.searchParams.get('prefix') ?? '';
  const limit = Number(url.searchParams.get('key_count_limit') ?? 1000);
  const start = Number(url.searchParams.get('cursor') ?? 0);
  const names = [...store.keys()].filter(k => k.startsWith(prefix) && live(k) !== undefined).sort();
  const page = names.slice(start, start + limit);
  const keys = page.map(name => {
    const entry = store.get(name);
    const key = { name };
    if (entry.expiration !== null) key.expiration = Math.floor(entry.expiration);
    if (entry.metadata !== null) key.metadata = JSON.parse(entry.metadata);
    return key;
  });
  const complete = start + limit >= names.length;
  return Response.json(complete ? { keys, list_complete: true } : { keys, list_complete: false, cursor: String(start + limit) });
}

export default {
  async fetch(request, env) {
    load(env);
    const url = new URL(request.url);
    if (request.method === 'POST' && url.pathname === '/bulk/get') {
      const { keys, type, withMetadata } = await request.json();
      const out = {};
      for (const key of keys) {
        const entry = live(key);
        const value = entry === undefined ? null : typed(entry, type);
        out[key] = withMetadata
          ? { value, metadata: entry?.metadata == null ? null : JSON.parse(entry.metadata) }
          : value;
      }
      return Response.json(out);
    }
    if (request.method === 'GET' && url.pathname === '/') return list(url);
    const key = decodeURIComponent(url.pathname.slice(1));
    switch (request.method) {
      case 'GET': {
        const entry = live(key);
        if (entry === undefined) return new Response(null, { status: 404 });
        const headers = entry.metadata === null ? {} : { 'CF-KV-Metadata': entry.metadata };
        return new Response(entry.value, { headers });
      }
      case 'PUT': {
        const value = new Uint8Array(await request.arrayBuffer());
        const at = url.searchParams.get('expiration'), ttl = url.searchParams.get('expiration_ttl');
        const expiration = at !== null ? Number(at) : ttl !== null ? now() + Number(ttl) : null;
        store.set(key, { value, metadata: request.headers.get('CF-KV-Metadata'), expiration });
        return new Response(null);
      }
      case 'DELETE':
        store.delete(key);
        return new Response(null);
    }
    return new Response(`heapprof's KV store: no ${request.method}`, { status: 405 });
  },
};
)js";

}  // namespace heapprof::remote
