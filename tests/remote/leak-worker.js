// The remote-profiling tests' worker: one leak and one garbage-heavy helper,
// each allocating in its own frames (object and array literals, no built-in
// calls), so exact attribution names them. Served by workerd, or by
// node_target.mjs under `node --inspect`.
let sessions = null;  // a linked list: growing it allocates in retainSession, not in Array.prototype.push
let retained = 0;
let served = 0;

// The leak: every request's session is kept forever.
function retainSession(id) {
  const session = { id, user: { id, plan: "pro", flags: [id, id + 1, id + 2, id + 3] }, seen: [id, id, id, id, id, id, id, id, id, id, id, id, id, id, id, id] };
  sessions = { session, next: sessions };
  retained++;
  return session;
}

// The garbage: rows built for one response, dropped right after (a linked
// list again, so that no row is charged to Array.prototype.push).
function buildReport(id) {
  let rows = null;
  let count = 0;
  for (let k = 0; k < 400; k++) {
    rows = { k, id, cells: [k, id, k + id, k * id], next: rows };
    count++;
  }
  return rows === null ? 0 : count;
}

export default {
  async fetch(request) {
    const id = ++served;
    retainSession(id);
    const rows = buildReport(id);
    return new Response(`ok ${rows} rows, ${retained} sessions`);
  },
};
