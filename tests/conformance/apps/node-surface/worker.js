// Not a framework: what the node: modules of nodejs_compat and
// cloudflare:workers export, one route per module or class, one line per
// property, sorted: its name and what it is (typeof a data property's value;
// get, set or getset for an accessor), as the surface app does for globals.
//   /module/NAME   the module's named exports, and its default export's own properties
//   /class/NAME    a class's static own properties and its prototype's own properties
//   /object/NAME   an object's own properties (the global process, ...)
// What heapprof does not offer of a module is in compare.mjs's allow-list,
// with why.
import * as async_hooks from 'node:async_hooks';
import * as buffer from 'node:buffer';
import * as crypto from 'node:crypto';
import * as events from 'node:events';
import * as path from 'node:path';
import * as path_posix from 'node:path/posix';
import * as process from 'node:process';
import * as string_decoder from 'node:string_decoder';
import * as url from 'node:url';
import * as util from 'node:util';
import * as util_types from 'node:util/types';
import * as cloudflare_workers from 'cloudflare:workers';

const kind = d => ('value' in d ? typeof d.value : `${d.get ? 'get' : ''}${d.set ? 'set' : ''}`);
const keyName = k => (typeof k === 'symbol' ? `[${k.description}]` : k);
const own = (o, prefix = '') => Reflect.ownKeys(o).map(k => `${prefix}${keyName(k)} ${kind(Object.getOwnPropertyDescriptor(o, k))}`);
const sorted = lines => lines.sort().join('\n');

const modules = {
  async_hooks, buffer, crypto, events, path, 'path/posix': path_posix, process, string_decoder, url, util, 'util/types': util_types,
  'cloudflare:workers': cloudflare_workers,
};
const classes = {
  'async_hooks.AsyncLocalStorage': async_hooks.AsyncLocalStorage, 'async_hooks.AsyncResource': async_hooks.AsyncResource,
  'buffer.Buffer': buffer.Buffer, 'events.EventEmitter': events.EventEmitter, 'string_decoder.StringDecoder': string_decoder.StringDecoder,
  'crypto.Hash': crypto.Hash, 'crypto.Hmac': crypto.Hmac,
  'cloudflare:workers.WorkerEntrypoint': cloudflare_workers.WorkerEntrypoint,
  'cloudflare:workers.DurableObject': cloudflare_workers.DurableObject, 'cloudflare:workers.RpcTarget': cloudflare_workers.RpcTarget,
};
const objects = {
  process: () => globalThis.process,
  'process.env': () => globalThis.process.env,
  'events.EventEmitter instance': () => new events.EventEmitter(),
  'path.posix': () => path.default.posix,
};

export default {
  async fetch(request) {
    const at = decodeURIComponent(new URL(request.url).pathname);
    let m;
    if ((m = /^\/module\/(.+)$/.exec(at)) && modules[m[1]]) {
      const ns = modules[m[1]];
      const exports = Object.keys(ns).map(k => `${k} ${typeof ns[k]}`);
      const def = ns.default !== null && (typeof ns.default === 'object' || typeof ns.default === 'function') ? own(ns.default, 'default.') : [];
      return new Response(sorted([...exports, ...def]));
    }
    if ((m = /^\/class\/(.+)$/.exec(at)) && classes[m[1]]) {
      const c = classes[m[1]];
      return new Response(sorted([...own(c), ...own(c.prototype, 'prototype ')]));
    }
    if ((m = /^\/object\/(.+)$/.exec(at)) && objects[m[1]]) return new Response(sorted(own(objects[m[1]]())));
    return new Response('no such route', { status: 404 });
  },
};
