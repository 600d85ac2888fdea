// The Durable Object benchmark's worker (tools/bench/durable_objects_bench.mjs):
// each request calls ping() on the object named by ?o=, so a run over N names
// makes N objects that hold nothing of their own.
import { DurableObject } from 'cloudflare:workers';

export class Empty extends DurableObject {
  ping() { return 1; }
}

export default {
  async fetch(request, env) {
    const name = new URL(request.url).searchParams.get('o') ?? 'one';
    return new Response(String(await env.OBJECTS.getByName(name).ping()));
  },
};
