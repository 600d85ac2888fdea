// A Workers-style handler written in TypeScript: compiled with tsc and bundled
// and minified with esbuild by the source map tests, then profiled.
import { MetricsRegistry } from "./metrics.js";
import { parseRoute, statusFor } from "./routing.js";

interface WorkerRequest {
  url?: string;
}

const registry = new MetricsRegistry();
let served = 0;

function handleRequest(url: string): string {
  const route = parseRoute(url);
  const status = statusFor(route);
  registry.recordRequest(route.name, status, served % 50);
  return `${status} ${route.name}`;
}

export default {
  // A Response, as Workers require (Node's generate step runs it too: Node 20 has Response).
  fetch(request: WorkerRequest | undefined): Response {
    served++;
    const url = request && typeof request.url === "string" ? request.url : `/items/${served % 7}?page=${served}`;
    return new Response(handleRequest(url));
  },
};
