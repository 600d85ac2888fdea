// The near-limit story end to end at a 128 MiB heap: `heapprof serve --leaks
// --heap-limit 128` runs tests/cli/data/leaks/leak-to-limit.js (the same
// bytes kept on every request) under a paced load; part of the way to the
// limit the leak endpoint's projection is read ("limit in ~N min (95 %:
// A-B)", and the same in requests), then the load goes on until the worker
// reaches its limit (the first request that fails: serve answers 503 and
// recreates the isolate). Per run: does the projection's 95 % interval hold
// that moment (the failing request's send), in minutes and in requests? Over the runs: how many times
// (the coverage count; about 95 % is what the intervals promise).
//   node leaks_limit.mjs --heapprof BIN [--runs N] [--rate R] [--at F] [--limit MiB] [--cadence D] [--json FILE]
// --rate: requests per second, paced (default 400); --at: the projection is
// read once the heap used is this share of the limit (default 0.4);
// --cadence: serve's time between snapshots (default serve's own).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..', '..');
const worker = path.join(root, 'tests', 'cli', 'data', 'leaks', 'leak-to-limit.js');
const args = process.argv.slice(2);
const opt = (name, fallback) => { const i = args.indexOf(name); return i < 0 ? fallback : args[i + 1]; };
const heapprof = opt('--heapprof');
const runs = Number(opt('--runs', '5'));
const rate = Number(opt('--rate', '400'));
const at = Number(opt('--at', '0.4'));
const limitMiB = Number(opt('--limit', '128'));
const jsonOut = opt('--json');
const cadence = opt('--cadence');
if (!heapprof || !(runs >= 1) || !(rate > 0) || !(at > 0 && at < 1) || !(limitMiB > 0)) {
  console.error('usage: leaks_limit.mjs --heapprof BIN [--runs N] [--rate R] [--at F] [--limit MiB] [--cadence D] [--json FILE]');
  process.exit(2);
}
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'heapprof-leaks-limit-'));
let child = null;
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(130));
process.on('exit', () => {
  if (child && child.exitCode === null) child.kill('SIGKILL');
  fs.rmSync(tmp, { recursive: true, force: true });
});
const sleep = ms => new Promise(r => setTimeout(r, ms));

function get(url, agent) {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { agent }, res => {
      const chunks = [];
      res.on('data', c => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode, body: Buffer.concat(chunks).toString() }));
    });
    req.on('error', reject);
  });
}

// Starts serve; resolves with its two base URLs once it prints them.
async function startServe(i) {
  const out = path.join(tmp, `serve-${i}.out`), err = path.join(tmp, `serve-${i}.err`);
  child = spawn(heapprof, ['serve', worker, '--leaks', '--heap-limit', String(limitMiB), '--interval', '64KiB',
    '--listen', '127.0.0.1:0', '--debug-listen', '127.0.0.1:0', ...(cadence ? ['--cadence', cadence] : [])],
  { stdio: ['ignore', fs.openSync(out, 'w'), fs.openSync(err, 'w')] });
  for (let k = 0; k < 600; k++) {
    const text = fs.existsSync(out) ? fs.readFileSync(out, 'utf8') : '';
    const base = /^heapprof serve: .* on (http:\/\/[0-9.:]+)\/ \(/m.exec(text);
    const debug = /^heapprof serve: profiles on (http:\/\/[0-9.:]+)\/debug\/pprof\//m.exec(text);
    if (base && debug) return { base: base[1], debug: debug[1], err };
    if (child.exitCode !== null) throw new Error(`heapprof serve exited: ${fs.readFileSync(err, 'utf8')}`);
    await sleep(100);
  }
  throw new Error('heapprof serve did not print its addresses within 60 s');
}

async function stopServe() {
  if (!child || child.exitCode !== null) return;
  child.kill('SIGTERM');
  await new Promise(r => (child.exitCode !== null ? r() : child.once('exit', r)));
}

// One run: paced requests, one projection part of the way, then to the limit.
async function oneRun(i) {
  const { base, debug } = await startServe(i);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const started = Date.now();
  let sent = 0, projection = null, report = null, reading = null;
  const pace = [];  // [requests answered, seconds since the start] every 100 requests
  const readProjection = async () => {
    const r = await get(`${debug}/debug/heapprof/leaks`);
    if (r.status !== 200) return;
    const j = JSON.parse(r.body);
    const p = j.projection;
    if (projection || !p.growing || p.minutes_to_limit == null || j.requests == null) return;
    if (p.heap_used_bytes < at * p.heap_limit_bytes) return;
    projection = p;
    report = { end_unix_nanos: j.end_unix_nanos, requests: j.requests, snapshots: j.session.snapshots, session: j.session };
  };
  for (;;) {
    // Paced: request k leaves at started + k / rate (at once when behind).
    const wait = started + (sent * 1000) / rate - Date.now();
    if (wait > 0) await sleep(wait);
    const sentAt = Date.now();
    const r = await get(`${base}/${sent}`, agent);
    sent++;
    if (sent % 100 === 0) pace.push([sent, (Date.now() - started) / 1000]);
    if (r.status !== 200) {
      const failedAt = Date.now();
      const failingSeconds = (failedAt - sentAt) / 1000;
      agent.destroy();
      await stopServe();
      if (!projection) throw new Error(`run ${i}: the limit came (request ${sent}) before a projection was read`);
      // The heap reached its limit in the failing request (it keeps ~10 KiB):
      // the moment is when it was sent. Its answer comes after V8's last
      // collections, the isolate's end and a new isolate: that is the
      // failure's cost, not time to the limit (reported apart).
      const minutesLeft = (sentAt - report.end_unix_nanos / 1e6) / 60000;
      const answeredMinutesLeft = (failedAt - report.end_unix_nanos / 1e6) / 60000;
      const requestsLeft = sent - report.requests;
      const inMinutes = projection.minutes_low <= minutesLeft &&
        (projection.minutes_high == null || minutesLeft <= projection.minutes_high);
      // The minutes at the last part's pace alone (no trend, no scatter), to compare.
      const lastLow = projection.minutes_at_last_pace_low, lastHigh = projection.minutes_at_last_pace_high;
      const inLastPace = lastLow == null ? null : lastLow <= minutesLeft && (lastHigh == null || minutesLeft <= lastHigh);
      const inRequests = projection.requests_low <= requestsLeft &&
        (projection.requests_high == null || requestsLeft <= projection.requests_high);
      return {
        text: projection.text, failed_request: sent, failed_status: r.status, read_at_requests: report.requests,
        snapshots_at_reading: report.snapshots, minutes_left: minutesLeft, minutes_to_limit: projection.minutes_to_limit,
        minutes_low: projection.minutes_low, minutes_high: projection.minutes_high, requests_left: requestsLeft,
        requests_to_limit: projection.requests_to_limit, requests_low: projection.requests_low,
        requests_high: projection.requests_high, holds_minutes: inMinutes, holds_requests: inRequests,
        pace_from: projection.pace_from, seconds_per_request: projection.seconds_per_request,
        seconds_per_request_per_mib: projection.seconds_per_request_per_mib,
        seconds_per_request_per_mib_low: projection.seconds_per_request_per_mib_low,
        last_pace_low: lastLow, last_pace_high: lastHigh, holds_last_pace: inLastPace,
        session_at_reading: report.session, load: os.loadavg()[0], failing_request_seconds: failingSeconds,
        answered_minutes_left: answeredMinutesLeft, seconds: (failedAt - started) / 1000, behind_seconds: (sentAt - started) / 1000 - (sent - 1) / rate, pace,
      };
    }
    if (!projection && !reading && sent % 200 === 0) reading = readProjection().finally(() => { reading = null; });
    if (Date.now() - started > 600000) throw new Error(`run ${i}: no heap limit within 10 minutes`);
  }
}

const results = [];
const fmtInterval = (lo, hi, digits) => `${lo.toFixed(digits)}-${hi == null ? 'inf' : hi.toFixed(digits)}`;
console.log(`leak-to-limit.js under heapprof serve --leaks --heap-limit ${limitMiB}, ${rate} requests/s, ` +
  `the projection read at ${Math.round(at * 100)} % of the limit, ${runs} run(s):`);
for (let i = 0; i < runs; i++) {
  const r = await oneRun(i);
  results.push(r);
  if (jsonOut) fs.writeFileSync(`${jsonOut}.partial`, JSON.stringify({ results }, null, 2) + '\n');
  console.log(`  run ${i + 1}: read after ${r.read_at_requests} requests: "${r.text}"`);
  console.log(`         reached the limit ${r.minutes_left.toFixed(2)} min later (95 %: ` +
    `${fmtInterval(r.minutes_low, r.minutes_high, 2)}: ${r.holds_minutes ? 'holds' : 'misses'}), ` +
    `${r.requests_left} requests later (95 %: ${fmtInterval(r.requests_low, r.requests_high, 0)}: ` +
    `${r.holds_requests ? 'holds' : 'misses'}); paced by ${r.pace_from}; request ${r.failed_request} answered ${r.failed_status}, ` +
    `sent ${r.behind_seconds.toFixed(2)} s behind the pace, answered ${r.failing_request_seconds.toFixed(2)} s later`);
}
const heldMinutes = results.filter(r => r.holds_minutes).length;
const heldRequests = results.filter(r => r.holds_requests).length;
const heldLastPace = results.filter(r => r.holds_last_pace).length;
const trends = results.filter(r => r.pace_from === 'trend').length;
console.log(`  coverage: the interval held the moment in minutes in ${heldMinutes} of ${runs} runs ` +
  `(paced by the trend in ${trends}; at the last part's pace alone, no trend or scatter: ${heldLastPace}), ` +
  `in requests in ${heldRequests} of ${runs}`);
if (jsonOut) {
  fs.writeFileSync(jsonOut, JSON.stringify({ limit_mib: limitMiB, rate, at, runs, held_minutes: heldMinutes,
    held_requests: heldRequests, held_last_pace: heldLastPace, trends, load: os.loadavg(), results }, null, 2) + '\n');
}
