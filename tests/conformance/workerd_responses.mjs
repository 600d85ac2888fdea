// The workerd half of the conformance suite: serves every app's bundle in one
// workerd process (one socket each) and sends each app's requests file in
// order, recording every response as the JSON lines `heapprof run
// --responses-out` writes ({"index", "method", "url", "status", "headers",
// "body" or "body_base64"}), so compare.mjs can put the two side by side.
//
//   node workerd_responses.mjs --workerd BIN --dir WORK NAME=BUNDLE.js,REQUESTS.jsonl,OUT.jsonl[,HANDLER.js] ...
// HANDLER.js (a module whose default export has fetch(request)) answers the
// app's subrequests, as `heapprof run --fetch-handler` does: it runs as the
// app's globalOutbound service.
//
// An app whose folder (the requests file's) holds a wrangler.toml gets its
// [[durable_objects.bindings]] (each class of the app's own module, with
// in-memory storage, keyed "<name>-<class>" as heapprof's embedded runtime
// keys its ids; SQLite-backed when a migration's new_sqlite_classes names
// it), read by the small reader below.
//
// Requests go over plain HTTP/1.1 with node:http, not fetch(): fetch adds
// headers of its own (accept, accept-language, sec-fetch-mode, user-agent,
// accept-encoding) that the embedded runtime never sees, and cannot put the
// request's own URL on the request line. The sockets use workerd's proxy
// style, so the worker's request.url is the URL of the requests file
// (https://... included), exactly as heapprof hands it to the worker.
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { writeWorkerdConfig } from '../../tools/workerd_config.mjs';
import { loopbackListener, spawnWorkerd } from '../../tools/workerd_spawn.mjs';

function usage(message) {
  console.error(`workerd_responses.mjs: ${message}`);
  process.exit(2);
}

const args = process.argv.slice(2);
let workerd = '', dir = '', compatibilityDate = '2024-09-23';
const apps = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--workerd') workerd = args[++i];
  else if (args[i] === '--dir') dir = args[++i];
  else if (args[i] === '--compatibility-date') compatibilityDate = args[++i];
  else {
    const m = /^([A-Za-z0-9_-]+)=([^,]+),([^,]+),([^,]+)(?:,([^,]+))?$/.exec(args[i]);
    if (!m) usage(`expected NAME=BUNDLE,REQUESTS,OUT[,HANDLER], got ${args[i]}`);
    apps.push({ name: m[1], bundle: path.resolve(m[2]), requests: m[3], out: m[4], handler: m[5] && path.resolve(m[5]) });
  }
}
if (!workerd || !dir || apps.length === 0) usage('need --workerd BIN --dir WORK and at least one app');

// The compatibility flags and Durable Object bindings of a wrangler.toml: this reader knows only the
// shapes the conformance apps use (top-level `key = "text"`, tables of
// `key = "text"` or `key = ["text", ...]`) and refuses anything else, so an
// app cannot quietly get a different configuration in workerd.
function configOf(file) {
  const text = fs.readFileSync(file, 'utf8');
  let name = '', table = '', current = null, flags = [];
  const objects = [], sqlite = new Set();
  for (const [i, raw] of text.split('\n').entries()) {
    const line = raw.replace(/#.*$/, '').trim();
    if (line === '') continue;
    let m;
    if ((m = /^\[\[([a-z_.]+)\]\]$/.exec(line)) || (m = /^\[([a-z_.]+)\]$/.exec(line))) {
      table = m[1];
      current = {};
      if (table === 'durable_objects.bindings') objects.push(current);
    } else if ((m = /^([a-z_]+)\s*=\s*("[^"]*"|\[("[^"]*"\s*,?\s*)*\])$/.exec(line))) {
      const value = JSON.parse(m[2]);
      if (table === '' && m[1] === 'name') name = value;
      else if (table === '' && m[1] === 'compatibility_flags') flags = value;
      else if (table === 'migrations' && m[1] === 'new_sqlite_classes') for (const c of value) sqlite.add(c);
      else if (current !== null) current[m[1]] = value;
    } else {
      throw new Error(`${file}:${i + 1}: the conformance suite's wrangler.toml reader does not know this line: ${raw}`);
    }
  }
  for (const o of objects) {
    if (!o.name || !o.class_name || o.script_name) throw new Error(`${file}: a Durable Object binding needs name and class_name of this worker`);
  }
  return {
    flags: Array.isArray(flags) ? flags : [flags],
    durableObjects: objects.map(o => ({ binding: o.name, className: o.class_name, uniqueKey: `${name || 'worker'}-${o.class_name}`, sql: sqlite.has(o.class_name) })),
  };
}

fs.mkdirSync(dir, { recursive: true });
for (const app of apps) {
  app.listener = await loopbackListener();
  app.port = app.listener.port;
  const wrangler = path.join(path.dirname(path.resolve(app.requests)), 'wrangler.toml');
  ({ flags: app.flags, durableObjects: app.durableObjects } = fs.existsSync(wrangler) ? configOf(wrangler) : { flags: [], durableObjects: [] });
}
// The module is named after the app; its subrequests go to its handler.
const configPath = writeWorkerdConfig(dir, {
  workers: apps.map(app => ({
    name: app.name, script: app.bundle, moduleName: path.basename(app.bundle), address: `127.0.0.1:${app.port}`,
    proxy: true, outbound: app.handler, durableObjects: app.durableObjects, compatibilityFlags: app.flags,
  })),
  compatibilityDate, file: 'conformance.capnp',
});
const child = spawnWorkerd(workerd, configPath, {
  sockets: Object.fromEntries(apps.map(app => [app.name, app.listener])), log: path.join(dir, 'workerd.log'),
});
let exited = null;
child.on('exit', code => { exited = code; });
const stop = () => { if (exited === null) child.kill('SIGTERM'); };
process.on('exit', stop);

// One request, proxy style; resolves to the recorded response (or the transport error).
function send(port, request) {
  return new Promise(resolve => {
    const url = new URL(request.url);
    const headers = {};
    for (const [name, value] of request.headers) headers[name] = value;
    if (!Object.keys(headers).some(h => h.toLowerCase() === 'host')) headers.host = url.host;
    const body = request.body === undefined ? null : Buffer.from(request.body, 'utf8');
    const req = http.request({ host: '127.0.0.1', port, method: request.method, path: request.url, headers, agent: false },
      res => {
        const chunks = [];
        res.on('data', c => chunks.push(c));
        res.on('end', () => {
          const pairs = [];
          for (let i = 0; i < res.rawHeaders.length; i += 2) pairs.push([res.rawHeaders[i].toLowerCase(), res.rawHeaders[i + 1]]);
          resolve({ status: res.statusCode, headers: pairs, body: Buffer.concat(chunks) });
        });
      });
    req.on('error', error => resolve({ error: error.message }));
    req.end(body);
  });
}

async function waitUntilServing(port) {
  for (let i = 0; i < 400; i++) {
    if (exited !== null) throw new Error(`workerd exited (${exited}):\n${fs.readFileSync(path.join(dir, 'workerd.log'), 'utf8')}`);
    const ok = await new Promise(resolve => {
      const s = net.connect(port, '127.0.0.1', () => { s.destroy(); resolve(true); });
      s.on('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise(r => setTimeout(r, 50));
  }
  throw new Error(`workerd did not open 127.0.0.1:${port} within 20 s`);
}

// The requests file, as heapprof reads it: one JSON object per line; headers an object or pairs.
function readRequests(file) {
  return fs.readFileSync(file, 'utf8').split('\n').filter(line => line.trim() !== '').map(line => {
    const r = JSON.parse(line);
    const headers = Array.isArray(r.headers) ? r.headers : Object.entries(r.headers || {});
    return { method: (r.method || 'GET').toUpperCase(), url: r.url, headers, body: r.body };
  });
}

// The body as text when it is UTF-8 (heapprof's rule), else base64.
function bodyField(bytes) {
  const text = bytes.toString('utf8');
  return Buffer.from(text, 'utf8').equals(bytes) ? { body: text } : { body_base64: bytes.toString('base64') };
}

try {
  for (const app of apps) {
    await waitUntilServing(app.port);
    const lines = [];
    const requests = readRequests(app.requests);
    for (let index = 0; index < requests.length; index++) {
      const request = requests[index];
      const got = await send(app.port, request);
      const record = { index, method: request.method, url: request.url };
      if (got.error) record.error = `transport: ${got.error}`;
      else Object.assign(record, { status: got.status, headers: got.headers }, bodyField(got.body));
      lines.push(JSON.stringify(record));
    }
    const tmp = `${app.out}.tmp-${process.pid}`;
    fs.writeFileSync(tmp, lines.join('\n') + '\n');
    fs.renameSync(tmp, app.out);
  }
} catch (error) {
  console.error(`workerd_responses.mjs: ${error.message}`);
  process.exitCode = 1;
} finally {
  stop();
}
