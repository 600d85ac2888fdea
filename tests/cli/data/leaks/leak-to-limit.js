// A worker that leaks the same bytes on every request (ten ~1 KiB entries
// kept in a linked list) until it reaches its heap limit
// (tests/cli/leaks_run_test.sh: the projection against the moment it does).
let kept = null;

function keepForever(id) {
  kept = { id, payload: new Array(120).fill(id), next: kept };
}

export default {
  async fetch(request) {
    for (let k = 0; k < 10; k++) keepForever(k);
    return new Response("ok");
  },
};
