// The remote-profiling tests' worker: one leak and one garbage-heavy helper,
// each allocating in its own frames (object and array literals, no built-in
// calls), so exact attribution names them. Served by workerd, or by
// node_target.mjs under `node --inspect`.
const sessions = [];
let served = 0;

// The leak: every request's session is kept forever.
function retainSession(id) {
  const session = { id, user: { id, plan: "pro", flags: [id, id + 1, id + 2, id + 3] }, seen: [id, id, id, id, id, id] };
  sessions.push(session);
  return session;
}

// The garbage: rows built for one response, dropped right after.
function buildReport(id) {
  const rows = [];
  for (let k = 0; k < 80; k++) rows.push({ k, id, cells: [k, id, k + id, k * id] });
  return rows.length;
}

export default {
  async fetch(request) {
    const id = ++served;
    retainSession(id);
    const rows = buildReport(id);
    return new Response(`ok ${rows} rows, ${sessions.length} sessions`);
  },
};
