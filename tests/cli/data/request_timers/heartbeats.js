// A worker that starts an interval on each request and never clears it, as
// an SDK that makes a client per request does: the interval's closure holds
// about half a megabyte of the request's. workerd cancels a request's timers when the
// request ends, so none of it stays in use; tests/cli/request_timers_test.sh
// checks that the embedded runtime frees it too, and calls nothing growing.
function startHeartbeat(request) {
  const history = new Array(5000);
  for (let i = 0; i < history.length; i++) history[i] = { at: i, url: request.url };
  let beats = 0;
  setInterval(() => { beats++; history.push(beats); }, 50);
}

export default {
  async fetch(request) {
    startHeartbeat(request);
    return new Response('ok');
  },
};
