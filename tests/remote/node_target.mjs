// Serves leak-worker.js (or the worker named as argv[2]) in a loop inside
// Node, for `node --inspect` attach tests. Node's Request/Response are
// undici's JavaScript, which would allocate more than the worker itself: a
// plain request object and a minimal Response stand in for them.
import { pathToFileURL } from "node:url";
import path from "node:path";

globalThis.Response = class Response {
  constructor(body, init) {
    this.body = body;
    this.status = init?.status ?? 200;
  }
};
const file = path.resolve(process.argv[2] ?? new URL("./leak-worker.js", import.meta.url).pathname);
const worker = (await import(pathToFileURL(file).href)).default;
const request = { method: "GET", url: "http://localhost/", headers: new Map() };

let failures = 0;
async function serve() {
  for (let n = 0; n < 100; n++) {
    const response = await worker.fetch(request, {}, {});
    if (response.status !== 200) failures++;
  }
  setImmediate(serve);  // lets the inspector's messages in
}
console.error("node target ready");
serve();
