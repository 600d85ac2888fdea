// Getters whose strings must be a worker's own, not slices of the runtime's.

import { ownStrings } from './host.js';

// In workerd these getters are C++ and answer a new string at every call.
// Here they are JavaScript, and what they answer is often a slice of the
// parsed input or of a bigger string (V8 makes substrings of 13 characters
// or more views into their parent), so a worker keeping url.pathname would
// keep the whole URL alive, charged to the runtime's parser. ownStrings puts
// each behind a native function that answers a flat copy of its own, made
// outside any runtime frame: a kept string holds only itself and is charged
// to the worker code that asked for it, as in workerd.
function ownStringsOf(proto, names) {
  for (const name of names) {
    const d = Object.getOwnPropertyDescriptor(proto, name);
    if (d.get !== undefined) d.get = ownStrings(d.get, 'get ' + name);
    else d.value = ownStrings(d.value, name);
    Object.defineProperty(proto, name, d);
  }
}
// Each class's module calls it on its prototype (URL, URLSearchParams,
// Request, Headers).

export { ownStringsOf };
