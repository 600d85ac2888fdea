// node:url: the WHATWG URL and URLSearchParams (the runtime's globals) and
// the helpers over them: fileURLToPath, pathToFileURL, format of a URL,
// domainToASCII, urlToHttpOptions. The legacy parser (parse, resolve,
// Url) is refused.
export function makeUrl(host) {
  const { URL, URLSearchParams } = host;
  function fileURLToPath(value) {
    const url = typeof value === 'string' ? new URL(value) : value;
    // workerd throws plain Errors here.
    if (!(url instanceof URL)) throw new TypeError('The "path" argument must be of type string or an instance of URL');
    if (url.protocol !== 'file:') throw new Error('The URL must be of scheme file');
    if (url.hostname !== '') throw new Error('File URL host must be "localhost" or empty on linux');
    if (/%2f/i.test(url.pathname)) throw new Error('File URL path must not include encoded / characters');
    return decodeURIComponent(url.pathname);
  }
  function pathToFileURL(path) {
    const resolved = String(path).startsWith('/') ? String(path) : '/' + String(path);
    const url = new URL('file://');
    url.pathname = resolved.replace(/%/g, '%25').replace(/\\/g, '%5C').replace(/\n/g, '%0A').replace(/\r/g, '%0D').replace(/\t/g, '%09');
    return url;
  }
  function format(value, options = {}) {
    if (!(value instanceof URL)) throw host.missingApi('url.format() of a legacy url object');
    const { auth = true, fragment = true, search = true } = options;
    const copy = new URL(value.href);
    if (!auth) { copy.username = ''; copy.password = ''; }
    if (!fragment) copy.hash = '';
    if (!search) copy.search = '';
    return copy.href;
  }
  function domainToASCII(domain) {
    try { return new URL('http://' + domain).hostname; } catch { return ''; }
  }
  function urlToHttpOptions(url) {
    const options = {
      protocol: url.protocol, hostname: url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname,
      hash: url.hash, search: url.search, pathname: url.pathname, path: (url.pathname || '') + (url.search || ''), href: url.href,
    };
    if (url.port !== '') options.port = Number(url.port);
    if (url.username || url.password) options.auth = decodeURIComponent(url.username) + ':' + decodeURIComponent(url.password);
    return options;
  }
  const refused = name => function () { throw host.missingApi('url.' + name + '()'); };
  return {
    URL, URLSearchParams, fileURLToPath, pathToFileURL, format, domainToASCII, urlToHttpOptions,
    toPathIfFileURL: value => value instanceof URL ? fileURLToPath(value) : value,
    parse: refused('parse'), resolve: refused('resolve'), resolveObject: refused('resolveObject'),
  };
}
