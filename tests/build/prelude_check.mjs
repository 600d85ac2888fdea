// The prelude stays modules per API, and bundling keeps their names:
//   node prelude_check.mjs <source dir> <build dir>
// - no file of the prelude (heapprof/runtime/worker_prelude.js and
//   heapprof/runtime/js/prelude/**) is over 500 lines;
// - every function and class of the embedded bundle carries a name written in
//   the sources: esbuild renames a nested name that collides with a module's
//   top-level one (fetch -> fetch2) and a class that names itself
//   (Headers -> _Headers, which PreludeMap.cmake gives back); such a rename
//   would show in profiles, stacks and Function.name.
import fs from 'node:fs';
import path from 'node:path';

const [src, build] = process.argv.slice(2);
if (!src || !build) { console.error('usage: prelude_check.mjs <source dir> <build dir>'); process.exit(2); }
const maxLines = 500;
const files = [path.join(src, 'heapprof/runtime/worker_prelude.js'), path.join(src, 'heapprof/runtime/worker_apis.js')];
const walk = dir => {
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) walk(p); else if (e.name.endsWith('.js')) files.push(p);
  }
};
walk(path.join(src, 'heapprof/runtime/js/prelude'));
let failed = false;
const fail = message => { console.log('FAIL: ' + message); failed = true; };
if (files.length < 10) fail(`only ${files.length} prelude files found under ${src}`);
const sourceNames = new Set();
// Declared names of functions, classes and of variables a function is assigned to.
const namesOf = text => {
  const out = [];
  for (const m of text.matchAll(/\b(?:function\*?|class)\s+([A-Za-z_$][\w$]*)/g)) out.push(m[1]);
  for (const m of text.matchAll(/\b(?:var|let|const)\s+([A-Za-z_$][\w$]*)\s*=\s*(?:async\s+)?(?:function\b|class\b|\([^()]*\)\s*=>|[A-Za-z_$][\w$]*\s*=>)/g)) out.push(m[1]);
  return out;
};
for (const f of files) {
  const text = fs.readFileSync(f, 'utf8');
  const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
  console.log(`${path.relative(src, f)}: ${lines} lines`);
  if (lines > maxLines) fail(`${path.relative(src, f)} has ${lines} lines (at most ${maxLines}: split it by API)`);
  for (const n of namesOf(text)) sourceNames.add(n);
}
// Both scripts of the prelude: worker_prelude.js and worker_apis.js.
for (const bundlePath of ['worker_prelude.js', 'worker_apis.js'].map(f => path.join(build, 'generated/heapprof', f))) {
  if (!fs.existsSync(bundlePath)) { fail(`no bundle at ${bundlePath} (build first)`); continue; }
  const bundle = fs.readFileSync(bundlePath, 'utf8');
  const renamed = new Set(namesOf(bundle).filter(n => !sourceNames.has(n)));
  // esbuild's own helpers (__export, __toCommonJS, ...), the installer of
  // WorkerPrelude.cmake's banner and `class extends` are not names to check.
  for (const n of renamed) if (!n.startsWith('__') && n !== 'installWorkerGlobals' && n !== 'workerApis' && n !== 'extends') fail(`the bundle names a function or class ${n}, which no prelude source does`);
  if (/\bclass _[A-Za-z]/.test(bundle)) fail('a class is still renamed _X in the bundle');
}
// What worker_apis.js's modules import from the first script's modules must
// be in worker_prelude.js's shareWithApis table (a name left out would read
// as undefined): each `case 'MODULE.js': return { ... }` line lists them.
{
  const installer = fs.readFileSync(path.join(src, 'heapprof/runtime/worker_prelude.js'), 'utf8');
  const shared = new Map();
  for (const m of installer.matchAll(/case '([a-z_]+\.js)': return \{([^}]*)\}/g)) {
    shared.set(m[1], new Set(m[2].split(',').map(n => n.trim().replace(/^get (\w+)\(\).*$/, '$1')).filter(Boolean)));
  }
  if (shared.size === 0) fail('no shareWithApis table found in worker_prelude.js');
  const bundle = path.join(build, 'generated/heapprof/worker_apis.js');
  const externals = fs.existsSync(bundle)
    ? new Set([...fs.readFileSync(bundle, 'utf8').matchAll(/__require\("[^"]*\/([a-z_]+\.js)"\)/g)].map(m => m[1])) : new Set();
  // The modules bundled into worker_apis.js: esbuild heads each with a comment of its path.
  const bundled = fs.existsSync(bundle) ? new Set([...fs.readFileSync(bundle, 'utf8').matchAll(/^  \/\/ (\S+\.js)$/gm)]
    .map(m => path.resolve(path.dirname(bundle), m[1]))) : new Set();
  if (bundled.size < 10) fail(`only ${bundled.size} modules found in ${bundle}`);
  for (const f of files) {
    const text = fs.readFileSync(f, 'utf8');
    for (const m of text.matchAll(/import\s*\{([^}]*)\}\s*from\s*'[^']*\/([a-z_]+\.js)'/g)) {
      if (!externals.has(m[2])) continue;  // bundled into the same script
      if (!bundled.has(path.resolve(f))) continue;  // a module of the first script
      for (const n of m[1].split(',').map(s => s.trim().split(/\s+as\s+/)[0]).filter(Boolean)) {
        if (!shared.get(m[2])?.has(n)) fail(`${path.relative(src, f)} imports ${n} from ${m[2]}, which shareWithApis does not share`);
      }
    }
  }
}
console.log(failed ? 'prelude check failed' : `ok: ${files.length} prelude files, names kept in the bundle`);
process.exit(failed ? 1 : 0);
