'use strict';
// Shared by the addon suites: environment, workloads and pprof decoding.
// Env (set by CTest): HEAPPROF_ADDON_DIR (build dir with the .node files),
// HEAPPROF_JS_DIR (tests/js with node_modules), HEAPPROF_WORK (scratch dir).
const path = require('node:path');
const fs = require('node:fs');
const zlib = require('node:zlib');
const v8 = require('node:v8');
const vm = require('node:vm');

const jsDir = path.resolve(process.env.HEAPPROF_JS_DIR);
const work = path.resolve(process.env.HEAPPROF_WORK);
fs.mkdirSync(work, { recursive: true });
const pprof = require(path.join(jsDir, 'node_modules', 'pprof-format'));

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc');

function decode(buffer) {
  return pprof.Profile.decode(zlib.gunzipSync(buffer));
}

// Per function name: the values of every sample whose stack holds it (each
// function counted once per sample), keyed by sample type.
function byFunction(profile) {
  const str = (i) => profile.stringTable.strings[Number(i)];
  const types = profile.sampleType.map((t) => str(t.type));
  const fnName = new Map(profile.function.map((f) => [Number(f.id), str(f.name)]));
  const locFns = new Map(profile.location.map((l) => [Number(l.id), l.line.map((ln) => fnName.get(Number(ln.functionId)))]));
  const out = new Map();
  const totals = Object.fromEntries(types.map((t) => [t, 0]));
  for (const s of profile.sample) {
    const names = new Set();
    for (const id of s.locationId) for (const n of locFns.get(Number(id)) || []) names.add(n);
    types.forEach((t, i) => { totals[t] += Number(s.value[i]); });
    for (const n of names) {
      if (!out.has(n)) out.set(n, Object.fromEntries(types.map((t) => [t, 0])));
      const entry = out.get(n);
      types.forEach((t, i) => { entry[t] += Number(s.value[i]); });
    }
  }
  return { functions: out, totals, comments: profile.comment.map((c) => str(c)) };
}

// Arrays of 128 small integers: about 1 KiB each, nothing shared.
function makeChunk(i) { return new Array(128).fill(i & 0xff); }

// Keeps `mib` MiB alive (returned) in 1 KiB arrays.
function retainMemory(mib) {
  const keep = [];
  for (let i = 0; i < mib * 1024; i++) keep.push(makeChunk(i));
  return keep;
}

// Allocates `mib` MiB of the same arrays and drops them at once.
function makeGarbage(mib) {
  let sink = 0;
  for (let i = 0; i < mib * 1024; i++) sink += makeChunk(i).length;
  return sink;
}

// Bytes the heap grows by while `fn`'s result is alive (after full GCs).
function retainedBytes(fn) {
  gc(); gc();
  const before = process.memoryUsage().heapUsed;
  const kept = fn();
  gc(); gc();
  const after = process.memoryUsage().heapUsed;
  return { bytes: after - before, kept };
}

module.exports = { decode, byFunction, gc, work, jsDir, retainMemory, makeGarbage, retainedBytes };
