// Puts heapprof's and workerd's responses to the same requests side by side
// (the JSON lines of `heapprof run --responses-out` and of
// workerd_responses.mjs), prints a table app by app and the first
// differences of each app, and exits 1 when any difference is not in the
// allow-list below.
//
//   node compare.mjs [--show N] NAME=HEAPPROF.jsonl,WORKERD.jsonl ...   (N: differences shown per app, 5)
import fs from 'node:fs';

// How the two records are read before they are compared: what HTTP itself
// makes equal (not differences, just two spellings of one response).
const http = {
  // Hop-by-hop and framing headers belong to the connection, so workerd's
  // HTTP server writes its own whatever the worker set (Hono's SSE helper sets
  // connection: keep-alive, the server answers close to a client that asked
  // for close); heapprof records the worker's Response itself, before any wire.
  // Never compared.
  serverHeaders: new Set([
    'connection',         // hop-by-hop: the server's keep-alive choice for this connection
    'transfer-encoding',  // framing of a body whose length the server did not know up front
  ]),
  // content-length is framing too: ignored when the worker did not set it
  // (heapprof has none) and the server's value is the body's length.
  contentLengthIsFraming: true,
  // A response to HEAD carries no body on the wire (RFC 9110 9.3.2); the
  // worker's Response may have one, which heapprof records.
  headBodyOnWire: true,
  // A header the worker appended twice goes on the wire as two field lines
  // (workerd) or as one comma-joined value (Headers iteration, heapprof):
  // the same field (RFC 9110 5.3). Set-Cookie is never joined.
  joinRepeatedFields: true,
  // A handler that throws: heapprof records the error, workerd's server
  // answers 500 "Internal Server Error" with no header of the worker's.
  uncaughtIsInternalServerError: true,
};

// The surface app's answers are one line per property ("name kind"); an
// entry of the allow-list below drops the lines it names from both sides.
// A string is a whole line, a RegExp matches lines.
const dropLines = patterns => text => text.split('\n')
  .filter(line => !patterns.some(p => (typeof p === 'string' ? line === p : p.test(line)))).join('\n');

// What may differ, and why. Keep this list tiny: each entry hides a real
// difference between the runtimes that heapprof cannot remove. An entry may
// apply to one app (app) and to the requests whose path matches (path) only;
// the entries that apply to a response are applied one after the other.
const allowList = [
  {
    // workerd's bookkeeping on its classes' prototypes, as on the surface
    // app's (below), and the Node internals its Buffer and EventEmitter keep
    // ([kIsBuffer], the *Slice/*Write methods of Node's own Buffer,
    // [kCapture] and domain on an emitter). heapprof's packages keep theirs:
    // buffer's _isBuffer, string_decoder's fillLast (Node's has lastChar,
    // lastNeed, lastTotal getters instead).
    why: "workerd's and the npm packages' internals on the node: modules' classes",
    app: 'node-surface', path: /^\/(class|object)\//,
    normalizeBody: dropLines([/^prototype \[(cloudflare:internal-class|kResourceTypeInspect|kIsBuffer|kCapture)\] /,
      /^prototype (ascii|base64|base64url|hex|latin1|ucs2|utf8)(Slice|Write) function$/, '[kCapture] boolean', 'domain object',
      'prototype _isBuffer boolean', 'prototype fillLast function', /^prototype last(Char|Need|Total) get$/]),
  },
  {
    // What the node: modules of workerd have and heapprof's do not
    // (docs/runtime.md's table): an import of one is a link error naming it.
    // crypto's ciphers, keys, Diffie-Hellman, signing, primes and FIPS;
    // events' on() iterator and EventEmitterAsyncResource; path's
    // matchesGlob; url's legacy Url and domainToUnicode; util's MIME types,
    // parseArgs, styleText, system errors, call sites, diff and the rest;
    // cloudflare:workers' cache, exports, tracing and restore; crypto.Hash
    // and Hmac being Node streams (_transform, _flush).
    why: "node: module exports heapprof does not offer",
    app: 'node-surface', path: /^\/(module|class|object)\//,
    normalizeBody: text => {
      const missing = new Set([
        ...['Certificate', 'Cipher', 'Cipheriv', 'Decipher', 'Decipheriv', 'DiffieHellman', 'DiffieHellmanGroup', 'ECDH', 'KeyObject',
          'PrivateKeyObject', 'PublicKeyObject', 'SecretKeyObject', 'Sign', 'Verify', 'X509Certificate', 'checkPrime', 'checkPrimeSync',
          'createCipher', 'createDecipher', 'createDiffieHellmanGroup', 'diffieHellman', 'generateKey', 'generateKeySync',
          'generatePrime', 'generatePrimeSync', 'getCipherInfo', 'getCiphers', 'getCurves', 'getDiffieHellman', 'getFips',
          'privateDecrypt', 'privateEncrypt', 'pseudoRandomBytes', 'publicDecrypt', 'publicEncrypt', 'secureHeapUsed', 'setEngine',
          'setFips'].map(n => `${n} function`), 'fips boolean', 'fips getset',
        'EventEmitterAsyncResource function', 'on function', 'kMaxEventTargetListeners symbol', 'kMaxEventTargetListenersWarned symbol',
        'matchesGlob function', 'Url function', 'domainToUnicode function',
        ...['MIMEParams', 'MIMEType', '_errnoException', '_exceptionWithHostPort', '_extend', 'aborted', 'convertProcessSignalToExitCode',
          'diff', 'getCallSite', 'getCallSites', 'getSystemErrorMap', 'getSystemErrorMessage', 'getSystemErrorName', 'log',
          'parseArgs', 'parseEnv', 'setTraceSigInt', 'styleText', 'transferableAbortController', 'transferableAbortSignal']
          .map(n => `${n} function`),
        'cache object', 'exports object', 'restore symbol', 'tracing object',
        'prototype _flush function', 'prototype _transform function',
      ]);
      return text.split('\n').filter(line => !missing.has(line.replace(/^default\./, ''))).join('\n');
    },
  },
  {
    // The messages of V8's own exceptions change between V8 versions, and the
    // embedded runtime runs Debian's libnode (V8 10.2) while workerd ships a
    // current V8: JSON.parse's "Unexpected token b in JSON at position 1" is
    // "Expected property name or '}' in JSON at position 1 (line 1 column 2)"
    // there. A worker that puts err.message in its response shows it.
    why: "V8's JSON.parse error message (V8 10.2 vs workerd's V8)",
    normalizeBody: text => text
      .replace(/Unexpected token .{1,2} in JSON at position \d+/g, '<JSON.parse error>')
      .replace(/(Unexpected end of JSON input|Expected [^"\\]*? in JSON at position \d+( \(line \d+ column \d+\))?|Unexpected token '.', "[^"\\]*"(\.\.\.)? is not valid JSON)/g, '<JSON.parse error>'),
  },
  {
    // workerd's own bookkeeping on its classes' prototypes (symbols of its C++
    // bindings), no API: [cloudflare:internal-class], [kResourceTypeInspect],
    // Headers' [immutable], the streams' [state], [length], [supportsBYOB],
    // [expectsBytes].
    why: "workerd's internal symbols on its prototypes",
    app: 'surface', path: /^\/(globals$|class\/|object\/)/,
    normalizeBody: dropLines([/^(prototype )?\[(cloudflare:internal-class|kResourceTypeInspect|immutable|state|length|supportsBYOB|expectsBytes)\] /]),
  },
  {
    // What a newer V8 adds (explicit resource management, Float16Array,
    // iterator helpers) is not in Debian's V8 10.2; an error's stack is an
    // accessor there and a data property here.
    why: "V8 10.2's built-ins (workerd's V8 has more)",
    app: 'surface', path: /^\/(globals|instance\/DOMException)$/,
    normalizeBody: dropLines(['AsyncDisposableStack function', 'DisposableStack function', 'SuppressedError function',
      'Float16Array function', 'Iterator function', 'stack getset', 'stack string']),
  },
  {
    // --expose-gc-as declares heapprof's GC hook like a `var` in every context,
    // which cannot be deleted: the runtime sets it to undefined (gc.cpp).
    why: "heapprof's GC hook global (undefined to workers)",
    app: 'surface', path: /^\/globals$/,
    normalizeBody: dropLines(['__heapprof_gc undefined']),
  },
  {
    // The big APIs heapprof does not offer (a worker that uses them fails at
    // once, never half works): TCP sockets, the Cloudflare namespace, the
    // scheduled/tail/trace handlers' events and unhandled-rejection events,
    // ReadableStreamBYOBReader.readAtLeast, the global scope's class chain
    // (ServiceWorkerGlobalScope, an EventTarget with dispatchEvent),
    // Request.fetcher, console.context.
    // WebSocketPair, WebSocket, EventSource and navigator.sendBeacon are
    // there and refuse to be used (docs/runtime.md), so they need no entry.
    why: 'big APIs heapprof does not offer',
    app: 'surface', path: /^\/(globals|class\/.*|object\/.*)$/,
    normalizeBody: dropLines([
      ...['WebSocketRequestResponsePair', 'ScheduledEvent', 'TailEvent', 'TraceEvent', 'PromiseRejectionEvent',
        'ServiceWorkerGlobalScope', 'WorkerGlobalScope', 'Body', 'dispatchEvent'].map(name => `${name} function`),
      'Cloudflare object', 'prototype readAtLeast function',
      'prototype atLeast get', 'prototype fetcher get', 'context function',
    ]),
  },
  {
    // The streams come from web-streams-polyfill (heapprof/runtime/js/package.json):
    // it keeps each object's state in own `_` properties (TextEncoderStream's
    // and TextDecoderStream's too: they are its TransformStreams), tags its prototypes
    // with Symbol.toStringTag, has the spec's internal methods as symbol-keyed
    // prototype methods, and still has the controller's abortReason.
    why: "web-streams-polyfill's layout",
    app: 'surface', path: /^\/(class|instance)\/(ReadableStream|WritableStream|TransformStream|ReadableByteStreamController|ByteLengthQueuingStrategy|CountQueuingStrategy|TextEncoderStream|TextDecoderStream)\w*$/,
    normalizeBody: dropLines([/^_\w+ /, 'prototype [Symbol.toStringTag] string', /^prototype \[\[\[\w+\]\]\] function$/,
      'prototype abortReason get']),
  },
  {
    // urlpattern-polyfill has the newer URLPattern members workerd's has not
    // yet (hasRegExpGroups, compareComponent) and a string tag.
    why: "urlpattern-polyfill's extra members",
    app: 'surface', path: /^\/class\/URLPattern$/,
    normalizeBody: dropLines(['prototype hasRegExpGroups get', 'static compareComponent function', 'prototype [Symbol.toStringTag] get']),
  },
  {
    // The compression streams are a readable and a writable stream around
    // zlib with their own backpressure, not TransformStream subclasses, so
    // readable and writable are their own getters.
    why: 'CompressionStream and DecompressionStream are not TransformStream subclasses',
    app: 'surface', path: /^\/class\/(Compression|Decompression)Stream$/,
    normalizeBody: dropLines(['prototype readable get', 'prototype writable get']),
  },
];

function usage(message) {
  console.error(`compare.mjs: ${message}`);
  process.exit(2);
}

function readLines(file) {
  let text;
  try {
    text = fs.readFileSync(file, 'utf8');
  } catch (error) {
    usage(`cannot read ${file}: ${error.message}`);
  }
  return text.split('\n').filter(l => l.trim() !== '').map((l, i) => {
    try {
      return JSON.parse(l);
    } catch {
      usage(`${file}:${i + 1}: not JSON`);
    }
  });
}

const allowedUses = new Map();  // allow-list reason -> responses it let through
const bodyBytes = r => (r.body_base64 !== undefined ? Buffer.from(r.body_base64, 'base64') : Buffer.from(r.body ?? '', 'utf8'));
const shown = (value, max = 120) => {
  const text = typeof value === 'string' ? JSON.stringify(value) : String(value);
  return text.length > max ? text.slice(0, max) + '…' : text;
};
const bodyShown = r => (r.body_base64 !== undefined ? `base64:${r.body_base64}` : r.body ?? '');

// Header name -> values in order (a name may repeat: set-cookie).
function headerMap(pairs) {
  const map = new Map();
  for (const [name, value] of pairs) {
    const key = name.toLowerCase();
    if (!map.has(key)) map.set(key, []);
    map.get(key).push(value);
  }
  if (http.joinRepeatedFields) {
    for (const [name, values] of map) if (name !== 'set-cookie' && values.length > 1) map.set(name, [values.join(', ')]);
  }
  return map;
}

const isUncaughtAnswer = w => w.status === 500 && bodyBytes(w).toString() === 'Internal Server Error' &&
  w.headers.every(([name]) => http.serverHeaders.has(name) || name === 'content-length');

// The differences of one request: [{field, heapprof, workerd}], empty when identical.
function differences(h, w, appName) {
  if (h.error !== undefined || w.error !== undefined) {
    if (h.error !== undefined && w.error !== undefined) return [];
    if (http.uncaughtIsInternalServerError && h.error !== undefined && isUncaughtAnswer(w)) return [];
    return [{
      field: 'outcome',
      heapprof: h.error !== undefined ? `error: ${h.error}` : `status ${h.status}`,
      workerd: w.error !== undefined ? `error: ${w.error}` : `status ${w.status}`,
    }];
  }
  const out = [];
  if (h.status !== w.status) out.push({ field: 'status', heapprof: h.status, workerd: w.status });
  const hb = bodyBytes(h), wb = bodyBytes(w);
  const hh = headerMap(h.headers), wh = headerMap(w.headers);
  for (const name of http.serverHeaders) {
    hh.delete(name);
    wh.delete(name);
  }
  if (http.contentLengthIsFraming && !hh.has('content-length') && wh.has('content-length')) {
    const expected = h.method === 'HEAD' ? null : String(wb.length);
    if (expected === null || wh.get('content-length').join() === expected) wh.delete('content-length');
  }
  for (const name of [...new Set([...hh.keys(), ...wh.keys()])].sort()) {
    const a = (hh.get(name) ?? []).join('\n'), b = (wh.get(name) ?? []).join('\n');
    if (a !== b) out.push({ field: `header ${name}`, heapprof: hh.has(name) ? a : '(absent)', workerd: wh.has(name) ? b : '(absent)' });
  }
  const headOnWire = http.headBodyOnWire && h.method === 'HEAD' && wb.length === 0;
  if (!headOnWire && !hb.equals(wb)) {
    // Every entry that applies, one after the other; those that changed
    // either side are the reasons the response passes.
    const path = new URL(h.url).pathname;
    let a = hb.toString(), b = wb.toString();
    const used = [];
    for (const entry of allowList) {
      if (!entry.normalizeBody || (entry.app && entry.app !== appName) || (entry.path && !entry.path.test(path))) continue;
      const na = entry.normalizeBody(a), nb = entry.normalizeBody(b);
      if (na !== a || nb !== b) used.push(entry.why);
      a = na;
      b = nb;
    }
    if (a === b) {
      for (const why of used) allowedUses.set(why, (allowedUses.get(why) ?? 0) + 1);
    } else if (a.includes('\n') || b.includes('\n')) {
      // Line-per-item answers (the surface app's): the lines one side lacks.
      const al = new Set(a.split('\n')), bl = new Set(b.split('\n'));
      const only = (x, y) => [...x].filter(l => !y.has(l)).join(', ') || '(nothing else)';
      out.push({ field: 'body lines', heapprof: only(al, bl), workerd: only(bl, al) });
    } else {
      out.push({ field: 'body', heapprof: bodyShown(h), workerd: bodyShown(w) });
    }
  }
  return out;
}

let show = 5;
const args = process.argv.slice(2);
if (args[0] === '--show') {
  show = Number(args[1]);
  if (!(show >= 0)) usage('--show takes a number');
  args.splice(0, 2);
}
const apps = args.map(arg => {
  const m = /^([^=]+)=([^,]+),([^,]+)$/.exec(arg);
  if (!m) usage(`expected NAME=HEAPPROF.jsonl,WORKERD.jsonl, got ${arg}`);
  return { name: m[1], heapprof: readLines(m[2]), workerd: readLines(m[3]) };
});
if (apps.length === 0) usage('no apps to compare');

const rows = [];
const details = [];
let differing = 0;
for (const app of apps) {
  const n = Math.max(app.heapprof.length, app.workerd.length);
  let same = 0, diff = 0;
  const explained = [];
  for (let i = 0; i < n; i++) {
    const h = app.heapprof[i], w = app.workerd[i];
    let found;
    if (!h || !w) {
      found = [{ field: 'response', heapprof: h ? `status ${h.status}` : '(none recorded)', workerd: w ? `status ${w.status}` : '(none recorded)' }];
    } else if (h.method !== w.method || h.url !== w.url) {
      found = [{ field: 'request', heapprof: `${h.method} ${h.url}`, workerd: `${w.method} ${w.url}` }];
    } else {
      found = differences(h, w, app.name);
    }
    if (found.length === 0) {
      same++;
      continue;
    }
    diff++;
    if (explained.length < show) {
      const r = h ?? w;
      explained.push(`  ${app.name} #${i} ${r.method} ${r.url}\n` +
        found.map(d => `      ${d.field}: heapprof ${shown(d.heapprof)}, workerd ${shown(d.workerd)}`).join('\n'));
    }
  }
  if (diff > explained.length) explained.push(`  ${app.name}: ${diff - explained.length} more differing request(s)`);
  rows.push([app.name, n, same, diff]);
  details.push(...explained);
  differing += diff;
}

const header = ['app', 'requests', 'identical', 'differing'];
const widths = header.map((h, i) => Math.max(h.length, ...rows.map(r => String(r[i]).length)));
const line = cells => cells.map((c, i) => (i === 0 ? String(c).padEnd(widths[i]) : String(c).padStart(widths[i]))).join('  ');
console.log(line(header));
for (const r of rows) console.log(line(r));
const total = rows.reduce((t, r) => [t[0], t[1] + r[1], t[2] + r[2], t[3] + r[3]], ['total', 0, 0, 0]);
console.log(line(total));
for (const [why, count] of allowedUses) console.log(`allowed: ${count} response(s) differ only by ${why}`);
if (differing > 0) {
  console.log('\nDifferences (heapprof run vs workerd, after the allow-list in compare.mjs):');
  console.log(details.join('\n'));
  process.exit(1);
}
console.log('\nEvery response identical (status, headers, body), apart from what compare.mjs allows and why.');
