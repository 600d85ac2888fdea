// Node's `assert` as html-rewriter-wasm's asyncify glue uses it (esbuild
// aliases `assert` to this file): a broken invariant of the asyncify state
// machine is an Error, as with Node's AssertionError.
'use strict';
function assert(value, message) {
  if (!value) throw new Error('html-rewriter-wasm: ' + (message || 'assertion failed'));
}
assert.strictEqual = (actual, expected, message) => {
  if (actual !== expected) assert(false, message || 'expected ' + String(expected) + ', got ' + String(actual));
};
module.exports = assert;
