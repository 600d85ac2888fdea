// The node: modules of nodejs_compat (heapprof/runtime/js/node/), bundled by
// esbuild into a script of its own (heapprof:runtime-node) that the runtime
// runs at a worker's first import of a node: module only: a worker that
// imports none pays nothing. Its completion value is load(host) -> module(name),
// which makes each module at its first import (its npm package's code too)
// and answers null for a module it does not offer.
import { makeAsyncHooks } from './node/async_hooks.js';
import { makeBuffer } from './node/buffer.js';
import { makeCrypto } from './node/crypto.js';
import { makeEvents } from './node/events.js';
import { makePath } from './node/path.js';
import { makeProcess } from './node/process.js';
import { makeStringDecoder } from './node/string_decoder.js';
import { makeUrl } from './node/url.js';
import { makeTypes, makeUtil } from './node/util.js';

export function load(host) {
  const factories = {
    async_hooks: makeAsyncHooks,
    buffer: makeBuffer,
    crypto: makeCrypto,
    events: makeEvents,
    path: makePath,
    'path/posix': () => module('path'),
    process: makeProcess,
    string_decoder: makeStringDecoder,
    url: makeUrl,
    util: makeUtil,
    'util/types': () => module('util').types,
  };
  const made = new Map();
  const moduleHost = { ...host, buffer: () => module('buffer'), isBuffer: v => module('buffer').Buffer.isBuffer(v) };
  // The exports of node:NAME (its `default` among them), or null.
  function module(name) {
    if (!Object.prototype.hasOwnProperty.call(factories, name)) return null;
    let exports = made.get(name);
    if (exports === undefined) {
      exports = factories[name](moduleHost);
      if (!Object.prototype.hasOwnProperty.call(exports, 'default')) exports = { ...exports, default: { ...exports } };
      made.set(name, exports);
    }
    return exports;
  }
  return module;
}
