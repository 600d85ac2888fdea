// The APIs of workerd this runtime does not offer, refused by name.

// What workerd offers and this runtime does not: using it throws an Error
// that says so (counted as the request's failure, its message in the run's
// outcome) instead of a ReferenceError that reads like a bug of the worker.
// docs/runtime.md lists them.
function missingApi(what) {
  return new Error(what + " is not available in heapprof's embedded runtime; " +
                   'profile this worker in workerd with --runtime workerd');
}
// A class, so that `typeof X` and `instanceof X` answer as in workerd (and
// libraries that look for it find it); constructing one throws.
function missingClass(name) {
  return { [name]: class { constructor() { throw missingApi(name); } } }[name];
}
// Globals of workerd's with no counterpart here (each class made at its
// global's first read). Installed first, so that a real implementation of one
// of them, once written, takes its place.
const missingGlobals = ['WebSocketPair', 'WebSocket', 'EventSource'];

export { missingApi, missingClass, missingGlobals };
