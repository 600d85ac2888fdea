// Fidelity case: a small helper keeps per-request sessions in a Map.
// Culprit: rememberSession (inuse_space). With inlining, TurboFan folds it
// into the handler and the profile blames `fetch` instead.
const sessions = new Map();

function rememberSession(id, request) {
  sessions.set(id, { id, url: request.url, seen: Date.now(), scratch: new Array(64).fill(id) });
}

export default {
  fetch(request) {
    const id = sessions.size;
    rememberSession(id, request);
    return new Response('ok');
  },
};
