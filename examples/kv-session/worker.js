// kv-session/worker.js: a session API on Workers bindings. wrangler.toml beside
// it gives env.API_VERSION (a var) and env.USERS (a KV namespace); users.json
// preloads the namespace; requests.jsonl is the traffic to replay.
//
// The bug: every session token is remembered in a module-level Map "to save a
// KV read", and nothing ever evicts it, so the isolate's heap grows with the
// number of distinct sessions.
//
// What the profile should show:
//   inuse_space: `rememberSession` holding what stays (the Map entries, and
//     with `heapprof top --cum` the structuredClone copies it makes).
// Run:  heapprof run examples/kv-session/worker.js --requests-file examples/kv-session/requests.jsonl \
//         --kv-data USERS=examples/kv-session/users.json
const sessions = new Map();

function rememberSession(token, user) {
  sessions.set(token, { user: structuredClone(user), seen: new Array(16).fill(token) });
}

export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    const id = url.pathname.split('/').pop();
    const user = await env.USERS.get('user:' + id, 'json');
    if (user === null) return Response.json({ error: 'no such user', id }, { status: 404 });
    const token = crypto.randomUUID();
    rememberSession(token, user);
    await env.USERS.put('last-login:' + id, new Date(0).toISOString());
    return Response.json({ api: env.API_VERSION, user: user.name, token, sessions: sessions.size },
                         { headers: { 'set-cookie': `session=${token}; HttpOnly` } });
  },
};
