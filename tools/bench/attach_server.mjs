// A plain Node.js HTTP service for tools/bench/attach_bench.sh: each request
// formats a small JSON report through two helpers the optimizer inlines (one
// keeps a bounded recent-requests log, one makes garbage), as a real
// handler's helpers are. Prints "listening PORT" once it serves.
import http from "node:http";

const recent = new Map();
let sequence = 0;
function remember(url) {
  recent.set(sequence++, { url, at: sequence, tags: [url.length, sequence & 7] });
  if (recent.size > 50000) recent.delete(sequence - 50000);
}
function format(id) {
  const items = [];
  for (let i = 0; i < 16; i++) items.push({ id: id * 16 + i, name: `item-${id}-${i}`, price: (i * 37) % 101 });
  return JSON.stringify({ id, items });
}
const server = http.createServer((req, res) => {
  remember(req.url);
  const body = format(sequence & 1023);
  res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
  res.end(body);
});
server.listen(Number(process.argv[2] ?? 0), "127.0.0.1", () => console.log(`listening ${server.address().port}`));
