// HTMLRewriter (lol-html) as workers use it: one route per behaviour
// (/<name>), each answering the rewritten HTML or the error it met, so a
// difference from workerd names the feature.
const page = `<!DOCTYPE html>
<html lang="en"><head><title>Shop &amp; more</title><link rel="stylesheet" href="/style.css"></head>
<body class="home">
<!-- banner -->
<nav><ul><li><a href="/">Home</a></li><li><a href="/shop" data-track="nav">Shop</a></li><li><a href="https://other.example/x">Out</a></li></ul></nav>
<main id="content"><h1>Welcome</h1><p class="lead">Hello <b>world</b>, plain text here.</p>
<p>Second <em>para</em> with <span data-price="10">10</span> and <span data-price="25">25</span>.</p>
<img src="/a.png" alt="A"><br/><input type="checkbox" checked></main>
<script>var x = 1 < 2;</script>
</body></html>`;
const html = (body = page, init = { headers: { 'content-type': 'text/html; charset=utf-8', 'x-app': 'shop' } }) => new Response(body, init);
// A body arriving in pieces of `size` bytes, as from an origin.
const chunked = (text, size) => {
  const bytes = new TextEncoder().encode(text);
  let at = 0;
  return new Response(new ReadableStream({
    pull(controller) {
      if (at >= bytes.length) { controller.close(); return; }
      controller.enqueue(bytes.slice(at, at + size));
      at += size;
    },
  }), { headers: { 'content-type': 'text/html' } });
};
const run = async (rewriter, response = html()) => {
  try {
    const out = rewriter.transform(response);
    return [out.status, [...out.headers], await out.text()].join('\n');
  } catch (e) { return `${e.name}: ${e.message}`; }
};
const tick = () => new Promise(resolve => setTimeout(resolve, 1));
const probes = {
  'attributes': () => run(new HTMLRewriter().on('a', {
    element(e) {
      const href = e.getAttribute('href');
      e.setAttribute('href', href.startsWith('/') ? 'https://shop.example' + href : href);
      if (e.hasAttribute('data-track')) e.removeAttribute('data-track');
      e.setAttribute('data-seen', [e.tagName, e.getAttribute('missing'), e.hasAttribute('href')].join(','));
    },
  })),
  'attribute-list': async () => {
    const seen = [];
    const text = await run(new HTMLRewriter().on('*', { element(e) { seen.push(`${e.tagName}:${JSON.stringify([...e.attributes])}:${e.namespaceURI}`); } }));
    return seen.join('\n') + '\n' + text;
  },
  'tag-name': () => run(new HTMLRewriter().on('b', { element(e) { e.tagName = 'strong'; } }).on('em', { element(e) { e.removeAndKeepContent(); } })),
  'content-text': () => run(new HTMLRewriter().on('h1', {
    element(e) { e.before('<hr>'); e.after('<hr>'); e.prepend('<i>'); e.append('</i>'); },
  })),
  'content-html': () => run(new HTMLRewriter().on('h1', {
    element(e) { e.before('<hr>', { html: true }); e.after('<p>after</p>', { html: true }); e.prepend('<i>pre</i>', { html: true }); e.append('<i>post</i>', { html: true }); },
  })),
  'replace-remove': () => run(new HTMLRewriter()
    .on('img', { element(e) { e.replace('<picture>pic</picture>', { html: true }); } })
    .on('nav li:nth-child(3)', { element(e) { e.remove(); } })
    .on('script', { element(e) { e.replace('<!-- no script -->', { html: false }); } })),
  'inner-content': () => run(new HTMLRewriter()
    .on('p.lead', { element(e) { e.setInnerContent('<b>new</b> lead', { html: true }); } })
    .on('h1', { element(e) { e.setInnerContent('<Title & co>'); } })),
  'removed-flag': () => {
    const flags = [];
    return run(new HTMLRewriter().on('span', { element(e) { flags.push(e.removed); e.remove(); flags.push(e.removed); } })).then(t => flags.join(',') + '\n' + t);
  },
  'text-chunks': async () => {
    const chunks = [];
    const text = await run(new HTMLRewriter().on('p', { text(t) { chunks.push(JSON.stringify([t.text, t.lastInTextNode, t.removed])); } }));
    return chunks.join('\n') + '\n' + text;
  },
  'text-replace': () => run(new HTMLRewriter().on('p', {
    text(t) { if (t.text.includes('plain')) t.replace('<u>REPLACED</u>', { html: true }); else if (t.text === 'Second ') t.remove(); else if (t.lastInTextNode) t.after('!'); },
  })),
  'comments': async () => {
    const seen = [];
    const text = await run(new HTMLRewriter()
      .on('body', { comments(c) { seen.push(c.text); c.text = ' rewritten '; c.before('[', { html: false }); c.after(']'); } })
      .onDocument({ comments(c) { seen.push('doc:' + c.text); } }));
    return seen.join('\n') + '\n' + text;
  },
  'comment-remove': () => run(new HTMLRewriter().on('*', { comments(c) { c.remove(); } }), html('<div><!-- a --><p>x<!-- b --></p></div>')),
  'doctype': async () => {
    const seen = [];
    const text = await run(new HTMLRewriter().onDocument({ doctype(d) { seen.push(JSON.stringify([d.name, d.publicId, d.systemId])); } }),
      html('<!DOCTYPE html PUBLIC "-//W3C//DTD HTML 4.01//EN" "http://www.w3.org/TR/html4/strict.dtd"><p>x</p>'));
    return seen.join('\n') + '\n' + text;
  },
  'document-end': () => run(new HTMLRewriter().onDocument({ end(end) { end.append('<script>injected()</script>', { html: true }); end.append('<&>'); } })),
  'document-text': async () => {
    let n = 0;
    const text = await run(new HTMLRewriter().onDocument({ text(t) { if (t.text.trim()) n++; } }));
    return n + '\n' + text;
  },
  'end-tag': () => run(new HTMLRewriter().on('main', {
    element(e) { e.onEndTag(end => { end.before('<footer>f</footer>', { html: true }); end.after('<!-- /main -->', { html: true }); }); },
  }).on('li', { element(e) { e.onEndTag(end => { end.name = 'LI'; }); } })),
  'async-handlers': () => run(new HTMLRewriter()
    .on('a', { async element(e) { await tick(); e.setAttribute('data-async', 'yes'); } })
    .on('p', { async text(t) { if (t.lastInTextNode) { await tick(); t.after(' [async]'); } } })
    .onDocument({ async end(end) { await tick(); end.append('<!-- async end -->', { html: true }); } })),
  'handler-this': () => {
    const handlers = { tag: 'seen', element(e) { e.setAttribute('data-this', this.tag); } };
    return run(new HTMLRewriter().on('h1', handlers));
  },
  'selectors': () => {
    const mark = name => ({ element(e) { e.setAttribute('data-' + name, ''); } });
    return run(new HTMLRewriter()
      .on('[data-price]', mark('attr'))
      .on('span[data-price="25"]', mark('attr-eq'))
      .on('a[href^="https"]', mark('prefix'))
      .on('a[href$=".css"], link[href$=".css"]', mark('suffix'))
      .on('a[href*="sho"]', mark('contains'))
      .on('main p', mark('descendant'))
      .on('ul > li', mark('child'))
      .on('p:nth-child(2)', mark('nth'))
      .on('li:first-child', mark('first'))
      .on('li:nth-of-type(2)', mark('nth-type'))
      .on('p:not(.lead)', mark('not'))
      .on('#content', mark('id'))
      .on('body.home', mark('class')));
  },
  'bad-selector': () => { try { new HTMLRewriter().on('p:hover', {}); return 'accepted'; } catch (e) { return e.name; } },
  'unsupported-selector': () => run(new HTMLRewriter().on('li:last-child', { element(e) { e.remove(); } })),
  'bad-selector-syntax': () => { try { new HTMLRewriter().on('a[', {}); return 'accepted'; } catch (e) { return e.name; } },
  'malformed': () => run(new HTMLRewriter().on('p', { element(e) { e.setAttribute('data-ok', '1'); } }).on('b', { element(e) { e.append('!'); } }),
    html('<div><p>unclosed <b>bold <i>both</p><p class=x id=y>two<td>cell</div></span><p>')),
  'utf8': () => run(new HTMLRewriter().on('p', { text(t) { if (t.text) t.replace(t.text.toUpperCase()); } }), html('<p>héllo wörld ✓ 𝄞 日本</p>')),
  'chunked-large': async () => {
    const rows = Array.from({ length: 4000 }, (_, i) => `<tr><td class="c${i % 7}">${i}</td><td><a href="/item/${i}">item ${i}</a></td></tr>`).join('\n');
    let links = 0, cells = 0;
    const out = new HTMLRewriter()
      .on('a', { element(e) { links++; e.setAttribute('href', 'https://cdn.example' + e.getAttribute('href')); } })
      .on('td.c3', { element(e) { cells++; e.setInnerContent('three'); } })
      .transform(chunked(`<table>${rows}</table>`, 997));
    const text = await out.text();
    let hash = 0;
    for (let i = 0; i < text.length; i++) hash = (hash * 31 + text.charCodeAt(i)) | 0;
    return [links, cells, text.length, hash, text.slice(0, 200), text.slice(-200)].join('\n');
  },
  'chunked-split-tag': async () => {
    const chunks = [];
    const text = await run(new HTMLRewriter().on('a', { element(e) { e.setAttribute('x', '1'); } }).on('p', { text(t) { chunks.push(t.text); } }), chunked('<p>aaaa<a href="/x">bb</a>cccc</p>'.repeat(3), 5));
    return chunks.length + '\n' + text;
  },
  'streams-out': async () => {
    const out = new HTMLRewriter().on('p', { element(e) { e.setAttribute('x', 'y'); } }).transform(chunked('<p>a</p>'.repeat(2000), 1000));
    const reader = out.body.getReader();
    let pieces = 0, total = 0;
    for (;;) { const { done, value } = await reader.read(); if (done) break; pieces++; total += value.length; }
    return [pieces > 1, total].join(',');
  },
  'throws-element': () => run(new HTMLRewriter().on('h1', { element() { throw new RangeError('handler broke'); } })),
  'throws-async': () => run(new HTMLRewriter().on('h1', { async element() { await tick(); throw new TypeError('async handler broke'); } })),
  'throws-end': () => run(new HTMLRewriter().onDocument({ end() { throw new Error('end broke'); } })),
  'throws-returned': () => new HTMLRewriter().on('h1', { element() { throw new Error('body broke'); } }).transform(html()),
  'reuse': async () => {
    const rewriter = new HTMLRewriter().on('h1', { element(e) { e.setInnerContent('again'); } });
    return (await run(rewriter)) + '\n' + (await run(rewriter, html('<h1>two</h1>')));
  },
  'null-body': async () => { const out = new HTMLRewriter().on('p', {}).transform(new Response(null, { status: 204, headers: { 'x-a': '1' } })); return [out.status, [...out.headers], out.body === null, await out.text()].join('|'); },
  'status-headers': () => run(new HTMLRewriter().on('h1', { element(e) { e.remove(); } }), html('<h1>x</h1><p>y</p>', { status: 404, statusText: 'Not Here', headers: { 'set-cookie': 'a=1', 'content-type': 'text/html' } })),
  'not-a-response': () => { try { new HTMLRewriter().transform('<p>'); return 'accepted'; } catch (e) { return e.name; } },
  'empty-rewriter': () => run(new HTMLRewriter()),
  'empty-body': () => run(new HTMLRewriter().onDocument({ end(end) { end.append('only'); } }), html('')),
};
export default {
  async fetch(request) {
    const name = new URL(request.url).pathname.slice(1);
    const probe = probes[name];
    if (!probe) return new Response('no probe ' + name, { status: 404 });
    const value = await probe();
    return value instanceof Response ? value : new Response(String(value), { headers: { 'content-type': 'text/plain' } });
  },
};
