// A Request's url without a URL object when the text is already normal.

import { loadApi } from './host.js';

// An http(s) URL that its parse would give back unchanged as href: lower-case
// scheme and host, no userinfo, port or fragment, a path and query of
// characters no encode set touches, no dot segment (in path or query: a
// false alarm only costs the full parse). For a Request's url, which every
// request needs: most URLs are already so, and this needs no URL object
// (URL's module is loaded only for the others).
const normalHttpUrl = /^https?:\/\/[a-z0-9.-]+\/[^\u0000-\u0020"#<>?`{}\\\u007f-\uffff]*(?:\?[^\u0000-\u0020"#<>'\u007f-\uffff]*)?$/;
const dotSegment = /(?:^|\/)(?:\.|%2e){1,2}(?:[\/?]|$)/i;
const hrefOf = text => normalHttpUrl.test(text) && !dotSegment.test(text) ? text : new (loadApi('url.js').URL)(text).href;

export { normalHttpUrl, dotSegment, hrefOf };
