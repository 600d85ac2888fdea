// nodejs_compat: the node: modules, loaded at their first import, and
// the globals the flag adds.

import { addTimer, clearTimeout } from './timers.js';
import { cryptoGlobals } from './crypto/globals.js';
import { getAsyncFrame, loadApi, natives, options, setAsyncFrame } from './host.js';
import { missingApi } from './missing.js';

// ---- nodejs_compat and cloudflare:workers ----

// The node: modules (heapprof/runtime/js/node.js), a script of their own run at
// the worker's first import of one (natives.nodeLibraries): a worker that
// imports none carries neither their source nor their objects.
let nodeModules = null;
function nodeModule(name) {
  if (nodeModules === null) {
    const load = natives.nodeLibraries();
    const { crypto, CryptoKey } = cryptoGlobals();
    // The Web APIs the node: modules build on, loaded now if they were not.
    const { Blob, File } = loadApi('blob.js');
    const { TextDecoder, TextEncoder, atob, btoa } = loadApi('encoding.js');
    const { URL } = loadApi('url.js');
    const { URLSearchParams } = loadApi('url_search_params.js');
    nodeModules = load({
      natives, missingApi, getFrame: getAsyncFrame, setFrame: setAsyncFrame,
      TextEncoder, TextDecoder, URL, URLSearchParams, Blob, File, atob, btoa, crypto, CryptoKey,
      processEnv: () => ({ ...processEnv }),
      builtinModule(specifier) {
        const exports = nodeModuleFor(specifier);
        return exports === null ? undefined : exports.default;
      },
    });
  }
  return nodeModules(name);
}
// The exports of an import specifier, under the flags: node:NAME, or NAME
// alone (nodejs_compat accepts both); null when the runtime has no such
// module or the flags do not offer it (nodejs_als: node:async_hooks only).
function nodeModuleFor(specifier) {
  const name = specifier.startsWith('node:') ? specifier.slice(5) : specifier;
  if (!options.nodejsCompat && !(options.nodejsAls && name === 'async_hooks')) return null;
  return nodeModule(name);
}
// process.env's vars (nodejs_compat_populate_process_env): makeEnv fills it.
const processEnv = {};
function setImmediate(callback, ...args) { return addTimer(callback, 0, args, false); }
// The globals nodejs_compat adds, as in workerd: Buffer and process are
// made at their first use (names in the lazy-globals table, not enumerable
// as in workerd), like the modules.
function installNodeGlobals() {
  Object.defineProperties(globalThis, {
    global: { value: globalThis, writable: true, configurable: true, enumerable: true },
    setImmediate: { value: setImmediate, writable: true, configurable: true, enumerable: true },
    clearImmediate: { value: clearTimeout, writable: true, configurable: true, enumerable: true },
  });
  natives.lazyGlobals(['Buffer', 'process'],
    name => name === 'Buffer' ? nodeModule('buffer').Buffer : nodeModule('process').default, false);
}

export { nodeModules, nodeModule, nodeModuleFor, processEnv, setImmediate, installNodeGlobals };
