// The cloudflare:workers module.

import { missingApi, missingClass } from './missing.js';

// cloudflare:workers: the classes a worker extends, env, waitUntil. The
// rest of workerd's module (RPC stubs, Workflows, withEnv, ...) refuses to
// be used. Made at the first import; like workerd's, it has no default export.
// The classes are made at the first import of the module or the first Durable
// Object namespace: a worker that uses neither carries none of them, and
// until then no value can be an instance of one.
let classes = null;
function workersClasses() {
  if (classes === null) {
    class WorkerEntrypoint {
      constructor(ctx, env) { this.ctx = ctx; this.env = env; }
    }
    class DurableObject {
      constructor(ctx, env) { this.ctx = ctx; this.env = env; }
    }
    class RpcTarget {}
    classes = { WorkerEntrypoint, DurableObject, RpcTarget };
  }
  return classes;
}
let currentWaits = null;  // the waitUntil list of the request being dispatched
const setCurrentWaits = waits => { currentWaits = waits; };
let cloudflareWorkers = null;
function cloudflareWorkersModule(env) {
  if (cloudflareWorkers === null) {
    const refuse = name => ({ [name]() { throw missingApi('cloudflare:workers ' + name + '()'); } })[name];
    const { WorkerEntrypoint, DurableObject, RpcTarget } = workersClasses();
    cloudflareWorkers = {
      WorkerEntrypoint, DurableObject, RpcTarget, env,
      waitUntil(promise) {
        if (currentWaits === null) throw new Error('waitUntil() can only be called while a request is being handled');
        currentWaits.push(Promise.resolve(promise));
      },
      RpcStub: missingClass('RpcStub'), RpcPromise: missingClass('RpcPromise'), RpcProperty: missingClass('RpcProperty'),
      ServiceStub: missingClass('ServiceStub'), WorkflowEntrypoint: missingClass('WorkflowEntrypoint'),
      abortIsolate: refuse('abortIsolate'), withEnv: refuse('withEnv'), withExports: refuse('withExports'),
      withEnvAndExports: refuse('withEnvAndExports'),
    };
  }
  return cloudflareWorkers;
}
// The fetch of a default export that is a class extending WorkerEntrypoint:
// an instance per request, made with (ctx, env), as workerd does; null for
// any other default export.
function entrypointFetch(handler) {
  if (typeof handler !== 'function' || classes === null || !(handler.prototype instanceof classes.WorkerEntrypoint)) {
    return null;
  }
  if (typeof handler.prototype.fetch !== 'function') return undefined;
  // A method's name is kept as written by the bundler (a nested function
  // named like a module's export would be renamed fetch2).
  return { fetch(request, env, ctx) { return new handler(ctx, env).fetch(request); } }.fetch;
}

export { workersClasses, currentWaits, setCurrentWaits, cloudflareWorkers, cloudflareWorkersModule, entrypointFetch };
