// json-replacer.js: a worker that serves sections of a product catalog as
// JSON and hides internal fields (cost, supplier, margin) with a
// JSON.stringify replacer. The replacer calls a recursive `redact`, which
// copies the whole subtree below the value it is given; JSON.stringify then
// calls the replacer again on every node of that copy. A node at depth d is
// copied d times for every response.
//
// What the profile should show:
//   alloc_space: `redact` on top, far ahead of everything else (the copies
//     are garbage as soon as the response is written).
//   inuse_space: small; nothing outlives a request but the catalog itself.
// Compare with json-replacer-fixed.js, whose replacer only looks at the key
// it is called for: same output, a fraction of the allocation.
// Run:  heapprof run examples/workers/json-replacer.js

const INTERNAL_FIELDS = new Set(['cost', 'supplier', 'margin', 'warehouse']);

// Builds a nested catalog: categories of categories, products at the leaves.
function buildCatalog(depth, breadth, prefix) {
  if (depth === 0) {
    const products = [];
    for (let i = 0; i < 4; i++) {
      const sku = `${prefix}-${i}`;
      products.push({
        sku, title: `Product ${sku}`, price: 10 + (sku.length * 7 + i) % 90, currency: 'EUR',
        tags: ['new', i % 2 ? 'sale' : 'regular'], cost: 4.2, supplier: 'ACME', margin: 0.31, warehouse: 'W1',
      });
    }
    return { name: prefix, products };
  }
  const children = [];
  for (let i = 0; i < breadth; i++) children.push(buildCatalog(depth - 1, breadth, `${prefix}.${i}`));
  return { name: prefix, cost: 0, children };
}

const catalog = { sections: [0, 1, 2, 3].map(i => buildCatalog(3, 3, `s${i}`)) };

// Returns a copy of `value` without internal fields, all the way down.
function redact(value) {
  if (Array.isArray(value)) {
    const out = new Array(value.length);
    for (let i = 0; i < value.length; i++) out[i] = redact(value[i]);
    return out;
  }
  if (value !== null && typeof value === 'object') {
    const out = {};
    for (const key in value) {
      if (!INTERNAL_FIELDS.has(key)) out[key] = redact(value[key]);
    }
    return out;
  }
  return value;
}

// The bug: a recursive redaction used as a replacer, which is already called
// for every node.
function publicFields(key, value) {
  return redact(value);
}

function renderSection(section) {
  return JSON.stringify({ section: section.name, generated: 'catalog-v2', data: section }, publicFields);
}

export default {
  async fetch(request, env, ctx) {
    const url = new URL(request.url);
    const id = Number(url.pathname.split('/').pop()) || url.search.length;
    const section = catalog.sections[id % catalog.sections.length];
    return new Response(renderSection(section), { headers: { 'content-type': 'application/json' } });
  },
};
