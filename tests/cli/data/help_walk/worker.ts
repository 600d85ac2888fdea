// The worker of help_walk_test.sh: each route shows what one flag of
// `heapprof run --runtime workerd` gave it (env vars, KV, a service, the
// outbound handler, nodejs_compat's Buffer), so the test can tell a flag
// that was honoured from one that was accepted and ignored.
import { Buffer } from 'node:buffer';

interface Env {
  GREETING: string;
  FROM_ENV_JSON: string;
  CACHE: { get(key: string): Promise<string | null> };
  AUTH: { fetch(url: string): Promise<Response> };
}

function describeRequest(request: Request, body: string): Record<string, string> {
  return { method: request.method, header: request.headers.get('x-test') ?? '', body };
}

export default {
  async fetch(request: Request, env: Env): Promise<Response> {
    const url = new URL(request.url);
    switch (url.pathname) {
      case '/env':
        return Response.json({
          greeting: env.GREETING,
          fromEnvJson: env.FROM_ENV_JSON,
          kv: await env.CACHE.get('k'),
          auth: await (await env.AUTH.fetch('https://auth/')).text(),
          outbound: await (await fetch('https://upstream.example/')).text(),
          buffer: Buffer.from('aGVsbG8=', 'base64').toString(),
        });
      case '/echo':
        return Response.json(describeRequest(request, await request.text()));
      case '/slow':
        await new Promise(resolve => setTimeout(resolve, 2000));
        return new Response('slow');
      case '/throw':
        throw new Error('planted failure');
    }
    return new Response('ok');
  },
};
