// A stand-in for Grafana Pyroscope's ingestion endpoint, for the push tests:
// POST /push.v1.PusherService/Push with an application/proto PushRequest,
// decoded here with a schema of its own (the public field numbers, read off
// the wire by hand) and checked as the store checks a push: labels (names,
// count, duplicates, __name__ and service_name), and per profile gzip or raw
// pprof of at most 4 MiB uncompressed, at most 16,000 samples, string 0
// empty, no '-' in sample type names, non-zero ids, one value per sample
// type, valid UTF-8 strings, time_nanos within the last hour. The pprof is
// decoded by pprof-format (npm), not by heapprof's schema.
//   node push_store.mjs PORT_FILE DUMP_DIR [SCRIPT]
// SCRIPT: statuses for the first requests, e.g. "503,429,503" (then 200);
// ending in '*', the last one from then on ("503*": a store that always fails).
// Writes the bound port to PORT_FILE, each accepted profile's bytes as they
// came to DUMP_DIR/N.pb.gz, and one JSON line per request to DUMP_DIR/log.jsonl.
// With PUSH_STORE_TLS_CERT and PUSH_STORE_TLS_KEY (PEM files), it serves
// HTTPS with that certificate.
import http from 'node:http';
import https from 'node:https';
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { createRequire } from 'node:module';

const [portFile, dumpDir, script = ''] = process.argv.slice(2);
const jsDir = process.env.HEAPPROF_JS_DIR;
const require = createRequire(import.meta.url);
const pprof = require(path.join(jsDir, 'node_modules', 'pprof-format'));
const forever = script.endsWith('*');
const scripted = script ? script.replace(/\*$/, '').split(',').map(Number) : [];
fs.mkdirSync(dumpDir, { recursive: true });
const log = fs.openSync(path.join(dumpDir, 'log.jsonl'), 'a');
let requests = 0;
let profiles = 0;

// --- protobuf wire format, by hand: varints and length-delimited fields.
function fields(buf) {
  const out = [];
  let i = 0;
  const varint = () => {
    let v = 0n;
    let shift = 0n;
    for (;;) {
      if (i >= buf.length) throw new Error('truncated varint');
      const b = buf[i++];
      v |= BigInt(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
      shift += 7n;
    }
  };
  while (i < buf.length) {
    const key = Number(varint());
    const num = key >> 3;
    const wire = key & 7;
    if (wire === 0) out.push({ num, value: varint() });
    else if (wire === 2) {
      const len = Number(varint());
      if (i + len > buf.length) throw new Error('truncated field');
      out.push({ num, bytes: buf.subarray(i, i + len) });
      i += len;
    } else if (wire === 1) { i += 8; } else if (wire === 5) { i += 4; } else throw new Error(`wire type ${wire}`);
  }
  return out;
}
const utf8 = new TextDecoder('utf-8', { fatal: true });
const text = (b) => utf8.decode(b);

// PushRequest { repeated RawProfileSeries series = 1 }
// RawProfileSeries { repeated LabelPair labels = 1; repeated RawSample samples = 2 }
// LabelPair { string name = 1; string value = 2 }   RawSample { bytes raw_profile = 1; string ID = 2 }
function decodePush(buf) {
  return fields(buf).filter((f) => f.num === 1).map((s) => {
    const series = { labels: [], samples: [] };
    for (const f of fields(s.bytes)) {
      if (f.num === 1) {
        const l = { name: '', value: '' };
        for (const g of fields(f.bytes)) {
          if (g.num === 1) l.name = text(g.bytes);
          if (g.num === 2) l.value = text(g.bytes);
        }
        series.labels.push(l);
      } else if (f.num === 2) {
        const s2 = { raw: Buffer.alloc(0), id: '' };
        for (const g of fields(f.bytes)) {
          if (g.num === 1) s2.raw = Buffer.from(g.bytes);
          if (g.num === 2) s2.id = text(g.bytes);
        }
        series.samples.push(s2);
      }
    }
    return series;
  });
}

function checkLabels(labels) {
  if (labels.length === 0) throw new Error('no labels');
  if (labels.length > 30) throw new Error(`${labels.length} label names; limit 30`);
  const seen = new Set();
  for (const { name, value } of labels) {
    if (!/^[a-zA-Z_][a-zA-Z0-9_]*$/.test(name) || name.length > 1024) throw new Error(`invalid label name '${name}'`);
    if (value.length > 2048) throw new Error(`label value too long: ${name}`);
    if (seen.has(name)) throw new Error(`duplicate label name: ${name}`);
    seen.add(name);
  }
  const get = (n) => labels.find((l) => l.name === n)?.value ?? '';
  if (!/^[a-zA-Z_:][a-zA-Z0-9_:]*$/.test(get('__name__'))) throw new Error('invalid metric name');
  if (!get('service_name')) throw new Error('service name is not provided');
}

// Returns the profile's __profile_type__ ids, or throws what the store would refuse.
function checkProfile(raw, metric) {
  const bytes = raw[0] === 0x1f && raw[1] === 0x8b ? zlib.gunzipSync(raw) : raw;
  if (bytes.length > 4 * 1024 * 1024) throw new Error(`profile of ${bytes.length} bytes exceeds 4 MiB`);
  const p = pprof.Profile.decode(bytes);
  const strings = p.stringTable.strings;
  if (strings[0] !== '') throw new Error('string_table[0] is not empty');
  // Every string valid UTF-8: decode each from the wire (pprof-format decodes leniently).
  for (const f of fields(bytes)) if (f.num === 6) text(f.bytes);
  if (p.sample.length > 16000) throw new Error(`${p.sample.length} samples exceed 16000`);
  const str = (i) => {
    const s = strings[Number(i)];
    if (s === undefined) throw new Error(`string ${i} out of range`);
    return s;
  };
  for (const t of p.sampleType) if (str(t.type).includes('-')) throw new Error('sample type contains -');
  for (const l of p.location) if (Number(l.id) === 0) throw new Error('location id is 0');
  for (const f of p.function) if (Number(f.id) === 0) throw new Error('function id is 0');
  for (const s of p.sample) {
    if (s.value.length !== p.sampleType.length) throw new Error('values per sample != sample types');
    if (s.label.length > 100) throw new Error('more than 100 labels in a sample');
  }
  const nowNs = BigInt(Date.now()) * 1000000n;
  const t = BigInt(p.timeNanos);
  if (t <= 0n || t < nowNs - 3600n * 1000000000n || t > nowNs + 600n * 1000000000n) {
    throw new Error(`time_nanos ${t} is not within the last hour`);
  }
  const period = p.periodType ? `${str(p.periodType.type)}:${str(p.periodType.unit)}` : ':';
  return {
    types: p.sampleType.map((v) => `${metric}:${str(v.type)}:${str(v.unit)}:${period}`),
    samples: p.sample.length,
    comments: p.comment.map((c) => str(c)),
    timeNanos: t.toString(),
  };
}

const tls = process.env.PUSH_STORE_TLS_CERT
  ? { cert: fs.readFileSync(process.env.PUSH_STORE_TLS_CERT), key: fs.readFileSync(process.env.PUSH_STORE_TLS_KEY) }
  : null;
const handler = (req, res) => {
  const chunks = [];
  req.on('data', (c) => chunks.push(c));
  req.on('end', () => {
    const n = requests++;
    const entry = { n, method: req.method, url: req.url, headers: req.headers };
    const answer = (status, body, extra = {}) => {
      entry.status = status;
      fs.writeSync(log, JSON.stringify({ ...entry, ...extra }) + '\n');
      res.writeHead(status, { 'content-type': status === 200 ? 'application/proto' : 'application/json' });
      res.end(body);
    };
    if (req.method !== 'POST' || req.url !== '/push.v1.PusherService/Push') {
      return answer(404, JSON.stringify({ code: 'not_found', message: 'no such procedure' }));
    }
    const status = n < scripted.length ? scripted[n] : forever ? scripted[scripted.length - 1] : 200;
    if (status !== 200) return answer(status, JSON.stringify({ code: 'unavailable', message: 'scripted failure' }));
    if (req.headers['content-type'] !== 'application/proto') {
      return answer(415, JSON.stringify({ code: 'invalid_argument', message: 'content-type' }));
    }
    try {
      const series = decodePush(Buffer.concat(chunks));
      const out = [];
      for (const s of series) {
        checkLabels(s.labels);
        const metric = s.labels.find((l) => l.name === '__name__').value;
        const samples = s.samples.map((smp) => {
          if (!/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/.test(smp.id)) {
            throw new Error(`sample ID ${smp.id} is not a UUID`);
          }
          const checked = checkProfile(smp.raw, metric);
          const file = path.join(dumpDir, `${profiles++}.pb.gz`);
          fs.writeFileSync(file, smp.raw);
          return { id: smp.id, file, ...checked };
        });
        out.push({ labels: Object.fromEntries(s.labels.map((l) => [l.name, l.value])), samples });
      }
      answer(200, Buffer.alloc(0), { series: out });
    } catch (e) {
      answer(400, JSON.stringify({ code: 'invalid_argument', message: String(e.message) }), { error: String(e.message) });
    }
  });
};
const server = tls ? https.createServer(tls, handler) : http.createServer(handler);
server.on('tlsClientError', (e) => fs.writeSync(log, JSON.stringify({ tls_error: String(e.message) }) + '\n'));
server.listen(Number(process.env.PUSH_STORE_PORT || 0), '127.0.0.1', () => {
  fs.writeFileSync(portFile, String(server.address().port));
});
process.on('SIGTERM', () => process.exit(0));
