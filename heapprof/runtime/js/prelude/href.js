// A Request's url without a URL object when the text is already normal.

import { loadApi, natives } from './host.js';

// An http(s) URL that its parse would give back unchanged as href: lower-case
// scheme and host, no userinfo, port or fragment, a path and query of
// characters no encode set touches, no dot segment (in path or query: a
// false alarm only costs the full parse). For a Request's url, which every
// request needs: most URLs are already so, and this needs no URL object
// (URL's module is loaded only for the others).
// (natives.isNormalHref, in C++: a regular expression run on every request
// would keep its compiled code on the heap.)
const { isNormalHref } = natives;
const hrefOf = text => isNormalHref(text) ? text : new (loadApi('url.js').URL)(text).href;

export { isNormalHref, hrefOf };
