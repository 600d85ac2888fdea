// fetch(): subrequests, answered by the --fetch-handler module or refused.

import { Request } from './request.js';
import { Response } from './response.js';

// ---- subrequests and caches ----

// Subrequests go to the user's --fetch-handler module (setFetchHandler), if any.
let subrequests = null;  // { receiver, fetch, filename }
function setFetchHandler(receiver, handler, filename) { subrequests = { receiver, fetch: handler, filename }; }
async function fetch(input, init) {
  if (subrequests === null) {
    const url = input instanceof Request ? input.url : String(input);
    throw new TypeError('fetch(' + JSON.stringify(url) + '): heapprof\'s runtime has no network; ' +
      'the worker\'s subrequests are refused (answer them with --fetch-handler FILE)');
  }
  const request = new Request(input, init);
  const response = await subrequests.fetch.call(subrequests.receiver, request);
  if (!(response instanceof Response)) {
    throw new TypeError('fetch(' + JSON.stringify(request.url) + '): the --fetch-handler ' + subrequests.filename +
      ' answered ' + (response === null ? 'null' : typeof response) + ' instead of a Response');
  }
  return response;
}

export { subrequests, setFetchHandler, fetch };
