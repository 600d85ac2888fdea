// Builds the source map test data from src/*.ts with real tools, then runs
// each build under Node's V8 sampling heap profiler to record the positions
// V8 itself reports for the functions (the generated positions heapprof sees).
//
//   node generate.mjs OUT_DIR
//
// OUT_DIR/tsc/            tsc output: one .js per .ts, map files beside them
// OUT_DIR/esbuild/        worker.min.js bundled and minified, worker.min.js.map
// OUT_DIR/esbuild-inline/ the same bundle with its map inline (data: URL)
// OUT_DIR/frames-<build>.tsv  name, script URL, line, column (1-based) of every
//                            function V8 reported from that build's scripts
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import inspector from "node:inspector";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import v8 from "node:v8";

// An inlined function vanishes from V8's stacks; keep every function visible.
v8.setFlagsFromString("--no-turbo-inlining");

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "../../..");
const out = path.resolve(process.argv[2] ?? "");
if (!process.argv[2]) {
  console.error("usage: node generate.mjs OUT_DIR");
  process.exit(2);
}
const require = createRequire(path.join(root, "tests/js/package.json"));
let tscBin, esbuild;
try {
  tscBin = require.resolve("typescript/bin/tsc");
  esbuild = require("esbuild");
} catch (e) {
  console.error(`generate.mjs: typescript and esbuild are missing (run tools/bootstrap.sh): ${e.message}`);
  process.exit(1);
}

fs.rmSync(out, { recursive: true, force: true });
fs.mkdirSync(out, { recursive: true });

execFileSync(process.execPath, [tscBin, "-p", path.join(here, "tsconfig.json"), "--outDir", path.join(out, "tsc")], {
  stdio: "inherit",
});
for (const [dir, sourcemap] of [["esbuild", true], ["esbuild-inline", "inline"]]) {
  esbuild.buildSync({
    entryPoints: [path.join(here, "src/worker.ts")],
    bundle: true,
    minify: true,
    format: "esm",
    sourcemap,
    outfile: path.join(out, dir, "worker.min.js"),
    logLevel: "warning",
  });
}

const session = new inspector.Session();
session.connect();
const post = (method, params) =>
  new Promise((resolve, reject) => session.post(method, params, (err, res) => (err ? reject(err) : resolve(res))));

async function profile(build, entry) {
  const dir = path.join(out, build);
  const worker = (await import(pathToFileURL(path.join(dir, entry)).href)).default;
  await post("HeapProfiler.startSampling", { samplingInterval: 32 });
  for (let i = 0; i < 4000; i++) worker.fetch(i % 3 === 0 ? { url: `/admin/users/${i}?x=${i}` } : undefined);
  const { profile } = await post("HeapProfiler.stopSampling");
  const prefix = pathToFileURL(dir).href + "/";
  const rows = new Set();
  (function walk(node) {
    const f = node.callFrame;
    if (f.url.startsWith(prefix)) rows.add([f.functionName, f.url, f.lineNumber + 1, f.columnNumber + 1].join("\t"));
    node.children.forEach(walk);
  })(profile.head);
  fs.writeFileSync(path.join(out, `frames-${build}.tsv`), [...rows].sort().join("\n") + "\n");
  return rows.size;
}

for (const [build, entry] of [["tsc", "worker.js"], ["esbuild", "worker.min.js"], ["esbuild-inline", "worker.min.js"]]) {
  const n = await profile(build, entry);
  if (n === 0) {
    console.error(`generate.mjs: no frames from ${build}`);
    process.exit(1);
  }
}
session.disconnect();
