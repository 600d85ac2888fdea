// Evaluates one expression in a DevTools target through the protocol and
// prints its value as JSON: node evaluate.mjs HOST:PORT EXPRESSION
// (Node 20 needs --experimental-websocket.)
const [where, expression] = process.argv.slice(2);
const list = await (await fetch(`http://${where}/json/list`)).json();
const ws = new WebSocket(list[0].webSocketDebuggerUrl);
await new Promise((resolve, reject) => { ws.onopen = resolve; ws.onerror = reject; });
const reply = await new Promise((resolve) => {
  ws.onmessage = (m) => { const d = JSON.parse(m.data); if (d.id === 1) resolve(d); };
  ws.send(JSON.stringify({ id: 1, method: "Runtime.evaluate", params: { expression, returnByValue: true } }));
});
ws.close();
if (!reply.result || reply.result.exceptionDetails) {
  console.error(JSON.stringify(reply));
  process.exit(1);
}
console.log(JSON.stringify(reply.result.result.value));
