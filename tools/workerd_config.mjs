// The workerd config (Cap'n Proto text) the benchmarks and the conformance
// suite serve their workers with: each worker an ES module on an HTTP socket
// of its own, optionally with a second worker as its globalOutbound (which
// then answers every fetch() the first one makes).
//
// Every name and path goes through capnpText, so quotes, backslashes, newlines
// and other control characters in them cannot break the config. The scripts
// are copied into the config's folder under plain names, because workerd
// embeds files relative to the config (an absolute path would be looked up in
// its import path instead); the module names, which show in stack traces and
// profiles, stay whatever the caller asks for.
//
// As a module:
//   import { writeWorkerdConfig } from '.../tools/workerd_config.mjs';
//   const file = writeWorkerdConfig(dir, { workers: [{ name, script, address, proxy, outbound, durableObjects }] });
// durableObjects: [{ binding, className, uniqueKey, sql? }], each class of the
// worker's own module bound as env.<binding>, with in-memory storage.
// As a command (one worker; prints the config's path):
//   node tools/workerd_config.mjs --dir DIR --script FILE --address HOST:PORT
//     [--name NAME] [--module-name NAME] [--outbound FILE] [--proxy]
//     [--compatibility-date YYYY-MM-DD] [--v8-flag FLAG]... [--file NAME]
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const DEFAULT_COMPATIBILITY_DATE = '2024-09-23';

// A Cap'n Proto text literal. Its escapes are C's (\n, \", \\, \xHH...), not
// JSON's: JSON.stringify's \u0001 is a parse error to workerd, and a raw
// newline ends the literal. Other characters go through as UTF-8.
export function capnpText(value) {
  if (typeof value !== 'string') throw new TypeError(`expected a string, got ${typeof value}`);
  let out = '"';
  for (const ch of value) {
    const code = ch.codePointAt(0);
    if (ch === '"' || ch === '\\') out += '\\' + ch;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\t') out += '\\t';
    else if (code < 0x20 || code === 0x7f) out += '\\x' + code.toString(16).padStart(2, '0');
    else out += ch;
  }
  return out + '"';
}

function check(condition, message) {
  if (!condition) throw new Error(`workerd config: ${message}`);
}

// A worker's Durable Object namespaces (workerd needs a uniqueKey per class:
// its ids are derived from it) and their env bindings, in-memory storage.
function durableObjectFields(objects) {
  if (objects.length === 0) return '';
  for (const o of objects) {
    for (const field of ['binding', 'className', 'uniqueKey']) {
      check(typeof o[field] === 'string' && o[field] !== '', `a Durable Object binding has no ${field}`);
    }
  }
  const classes = [...new Map(objects.map(o => [o.className, o])).values()];
  return `
      bindings = [ ${objects.map(o => `(name = ${capnpText(o.binding)}, durableObjectNamespace = (className = ${capnpText(o.className)}))`).join(', ')} ],
      durableObjectNamespaces = [ ${classes.map(o => `(className = ${capnpText(o.className)}, uniqueKey = ${capnpText(o.uniqueKey)}${o.sql ? ', enableSql = true' : ''})`).join(', ')} ],
      durableObjectStorage = (inMemory = void),`;
}

// The config text. Each worker: { name, moduleName, embed, address, proxy?,
// outbound?: { moduleName, embed }, compatibilityFlags?: [flag, ...] }, embed
// being a file in the config's folder.
export function workerdConfig({ workers, compatibilityDate = DEFAULT_COMPATIBILITY_DATE, v8Flags = [] }) {
  check(Array.isArray(workers) && workers.length > 0, 'no worker');
  check(/^\d{4}-\d{2}-\d{2}$/.test(compatibilityDate), `compatibility date ${compatibilityDate} is not YYYY-MM-DD`);
  const names = new Set();
  const services = [], sockets = [];
  const worker = (moduleName, embed, durableObjects = [], flags = []) => `(
      modules = [ (name = ${capnpText(moduleName)}, esModule = embed ${capnpText(embed)}) ],
      compatibilityDate = ${capnpText(compatibilityDate)},` +
    (flags.length > 0 ? `\n      compatibilityFlags = [ ${flags.map(capnpText).join(', ')} ],` : '') +
    durableObjectFields(durableObjects);
  for (const w of workers) {
    for (const field of ['name', 'moduleName', 'embed', 'address']) {
      check(typeof w[field] === 'string' && w[field] !== '', `worker ${JSON.stringify(w.name)} has no ${field}`);
    }
    // The outbound service's name is the worker's with a suffix: it must not
    // be some other worker's name.
    const outboundName = w.outbound ? `${w.name} (globalOutbound)` : null;
    for (const n of [w.name, outboundName]) {
      if (n === null) continue;
      check(!names.has(n), `two services are named ${JSON.stringify(n)}`);
      names.add(n);
    }
    check(w.compatibilityFlags === undefined || Array.isArray(w.compatibilityFlags),
      `worker ${JSON.stringify(w.name)}: compatibilityFlags must be a list`);
    services.push(`    (name = ${capnpText(w.name)}, worker = ${worker(w.moduleName, w.embed, w.durableObjects, w.compatibilityFlags)}` +
      (outboundName ? `\n      globalOutbound = ${capnpText(outboundName)},` : '') + '\n    )),');
    if (outboundName) {
      check(w.outbound.moduleName && w.outbound.embed, `worker ${JSON.stringify(w.name)}: outbound needs moduleName and embed`);
      services.push(`    (name = ${capnpText(outboundName)}, worker = ${worker(w.outbound.moduleName, w.outbound.embed)}\n    )),`);
    }
    // Proxy style: the request line carries the whole URL, which becomes the
    // worker's request.url (https://... included).
    sockets.push(`    (name = ${capnpText(w.name)}, address = ${capnpText(w.address)}, ` +
      `http = (${w.proxy ? 'style = proxy' : ''}), service = ${capnpText(w.name)}),`);
  }
  return `# Written by tools/workerd_config.mjs.
using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [
${services.join('\n')}
  ],
  sockets = [
${sockets.join('\n')}
  ],
  v8Flags = [ ${v8Flags.map(capnpText).join(', ')} ],
);
`;
}

// Copies each worker's script (and outbound script) into dir and writes the
// config there; returns the config's path. Each worker: { name, script,
// address, moduleName? (default: the script's file name), proxy?, outbound?
// (a script path), compatibilityFlags? }.
export function writeWorkerdConfig(dir, { workers, compatibilityDate, v8Flags, file = 'workerd.capnp' }) {
  check(Array.isArray(workers) && workers.length > 0, 'no worker');
  fs.mkdirSync(dir, { recursive: true });
  const copy = (script, as) => {
    check(typeof script === 'string' && script !== '', 'a worker has no script');
    check(fs.statSync(script, { throwIfNoEntry: false })?.isFile(), `${script} is not a file`);
    fs.copyFileSync(script, path.join(dir, as));
    return as;
  };
  const described = workers.map((w, i) => ({
    name: w.name,
    address: w.address,
    proxy: Boolean(w.proxy),
    moduleName: w.moduleName ?? path.basename(String(w.script)),
    compatibilityFlags: w.compatibilityFlags,
    embed: copy(w.script, `worker-${i}.js`),
    durableObjects: w.durableObjects,
    outbound: w.outbound && { moduleName: path.basename(w.outbound), embed: copy(w.outbound, `worker-${i}-outbound.js`) },
  }));
  const text = workerdConfig({ workers: described, compatibilityDate, v8Flags });
  const configPath = path.join(dir, file);
  fs.writeFileSync(configPath, text);
  return configPath;
}

function main(argv) {
  const usage = 'usage: workerd_config.mjs --dir DIR --script FILE --address HOST:PORT [--name NAME] ' +
    '[--module-name NAME] [--outbound FILE] [--proxy] [--compatibility-date YYYY-MM-DD] [--v8-flag FLAG]... [--file NAME]';
  const o = { name: 'main', v8Flags: [] };
  const valued = {
    '--dir': 'dir', '--script': 'script', '--address': 'address', '--name': 'name', '--module-name': 'moduleName',
    '--outbound': 'outbound', '--compatibility-date': 'compatibilityDate', '--file': 'file',
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--proxy') o.proxy = true;
    else if (a === '--v8-flag' && i + 1 < argv.length) o.v8Flags.push(argv[++i]);
    else if (a in valued && i + 1 < argv.length) o[valued[a]] = argv[++i];
    else if (a === '--help' || a === '-h') { console.log(usage); return 0; }
    else { console.error(`workerd_config.mjs: unexpected ${JSON.stringify(a)}\n${usage}`); return 2; }
  }
  for (const need of ['dir', 'script', 'address']) {
    if (!o[need]) { console.error(`workerd_config.mjs: --${need} is required\n${usage}`); return 2; }
  }
  try {
    console.log(writeWorkerdConfig(o.dir, {
      workers: [{ name: o.name, script: o.script, address: o.address, moduleName: o.moduleName, proxy: o.proxy, outbound: o.outbound }],
      compatibilityDate: o.compatibilityDate, v8Flags: o.v8Flags, file: o.file,
    }));
    return 0;
  } catch (error) {
    console.error(`workerd_config.mjs: ${error.message}`);
    return 1;
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exitCode = main(process.argv.slice(2));
}
