// node:path: POSIX paths from the npm package `path-browserify` (Node's
// path.posix, ported); workerd's path is POSIX too. win32 is refused.
export function makePath(host) {
  const posix = require('path-browserify');
  const win32 = new Proxy({}, { get(_, name) { throw host.missingApi('path.win32.' + String(name)); } });
  const { _makeLong, ...rest } = posix;  // the package's internal helper, not Node's API
  const path = { ...rest, win32, toNamespacedPath: p => p };
  path.posix = path;
  return { ...path, default: path };
}
