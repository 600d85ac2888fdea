// The second script of the prelude: the Web APIs nothing on a request's path
// uses (URL, Blob, FormData, the encodings, crypto, the events, ...).
// WorkerPrelude.cmake bundles it apart from worker_prelude.js, with the
// prelude's own modules (host.js, headers.js, ...) left as imports, and the
// runtime compiles and runs it at the first loadApi() (host.js,
// natives.webApis): a worker that uses none of these APIs carries no function,
// scope or string of theirs. Each module then runs at its own first load.
// The script's completion value is a function of `require`, which answers
// what these modules import from the prelude's (worker_prelude.js shares it).
export const modules = {
  'abort.js': () => require('./js/prelude/abort.js'),
  'blob.js': () => require('./js/prelude/blob.js'),
  'cache.js': () => require('./js/prelude/cache.js'),
  'compression.js': () => require('./js/prelude/compression.js'),
  'console.js': () => require('./js/prelude/console.js'),
  'crypto/subtle.js': () => require('./js/prelude/crypto/subtle.js'),
  'dom_exception.js': () => require('./js/prelude/dom_exception.js'),
  'encoding.js': () => require('./js/prelude/encoding.js'),
  'events.js': () => require('./js/prelude/events.js'),
  'forms.js': () => require('./js/prelude/forms.js'),
  'html_rewriter.js': () => require('./js/prelude/html_rewriter.js'),
  'kv.js': () => require('./js/prelude/kv.js'),
  'navigator.js': () => require('./js/prelude/navigator.js'),
  'node_compat.js': () => require('./js/prelude/node_compat.js'),
  'url.js': () => require('./js/prelude/url.js'),
  'url_search_params.js': () => require('./js/prelude/url_search_params.js'),
  'workerd_streams.js': () => require('./js/prelude/workerd_streams.js'),
};
