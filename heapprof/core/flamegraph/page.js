// heapprof flamegraph page: draws the call tree embedded as JSON in
// #heapprof-data on a canvas. Only frames wide enough to see are laid out;
// narrower siblings are merged into one block, so 50k-frame profiles stay fast.
(function () {
  'use strict';
  var t0 = performance.now();
  var ROW = 18;          // frame height in CSS pixels
  var MIN_W = 1;         // frames narrower than this (px) are merged
  var LABEL_W = 28;      // frames narrower than this get no label
  var MAX_TABLE_ROWS = 1500;

  var D = JSON.parse(document.getElementById('heapprof-data').textContent);
  var N = D.up.length;
  var T = D.types.length;
  var DIFF = !!D.diff;
  var F = D.names.length;

  // ---- the tree ----------------------------------------------------------
  var parent = new Int32Array(N);
  var fnOf = new Int32Array(N);
  var depth = new Int32Array(N);
  var childCount = new Int32Array(N + 1);
  for (var i = 0; i < N; i++) {
    parent[i] = i - D.up[i];
    fnOf[i] = D.fn[i];
    if (i > 0) { depth[i] = depth[parent[i]] + 1; childCount[parent[i]]++; }
  }
  var childStart = new Int32Array(N + 1);
  for (i = 0; i < N; i++) childStart[i + 1] = childStart[i] + childCount[i];
  var children = new Int32Array(Math.max(N - 1, 0));
  var fill = childStart.slice(0, N);
  for (i = 1; i < N; i++) children[fill[parent[i]]++] = i;

  var fileOf = D.fileOf, files = D.files, names = D.names, lines = D.lines;

  function fnName(f) { return f < 0 ? 'all' : names[f]; }
  function fnFile(f) { return f < 0 ? '' : files[fileOf[f]]; }
  // Files are printed by the shortest suffix unique within the profile.
  var fileLabels = D.fileLabels || files;
  function fnWhere(f) {
    var file = f < 0 ? '' : fileLabels[fileOf[f]];
    if (!file) return '';
    return lines[f] > 0 ? file + ':' + lines[f] : file;
  }

  // Totals of a value column (series * T + type), cached.
  var totalsCache = {};
  function totals(col) {
    if (totalsCache[col]) return totalsCache[col];
    var self = D.self[col];
    var tot = new Float64Array(N);
    for (var k = 0; k < N; k++) tot[k] = self[k];
    for (k = N - 1; k > 0; k--) tot[parent[k]] += tot[k];
    totalsCache[col] = tot;
    return tot;
  }
  // Sampling variances, summed like the values (docs/statistics.md); null
  // when the profile cannot say how it was sampled.
  var varCache = {};
  function varTotals(col) {
    var v = D.variance && D.variance[col];
    if (!v) return null;
    if (varCache[col]) return varCache[col];
    var tot = new Float64Array(N);
    for (var k = 0; k < N; k++) tot[k] = v[k];
    for (k = N - 1; k > 0; k--) tot[parent[k]] += tot[k];
    varCache[col] = tot;
    return tot;
  }
  // The 95 % sampling error of the share part/whole, in points: a Wilson score
  // interval on the effective samples of the delta-method variance, as
  // heapprof top prints it (the larger side of the interval).
  function shareError(part, partVar, whole, wholeVar) {
    if (!(whole > 0) || !(wholeVar > 0)) return null;
    var z = 1.959963984540054, r = Math.max(0, Math.min(1, part / whole));
    var v = (partVar * (1 - r) * (1 - r) + Math.max(0, wholeVar - partVar) * r * r) / (whole * whole);
    var n = r > 0 && r < 1 && v > 0 ? r * (1 - r) / v : whole * whole / wholeVar;
    var z2n = z * z / n, center = (r + z2n / 2) / (1 + z2n);
    var half = z / (1 + z2n) * Math.sqrt(r * (1 - r) / n + z2n / (4 * n));
    var lo = Math.max(0, Math.min(center - half, r)), hi = Math.min(1, Math.max(center + half, r));
    return 100 * Math.max(hi - r, r - lo);
  }
  function fmtError(points) { return points === null ? '' : ' \u00b1' + points.toFixed(1); }
  function newCol(t) { return DIFF ? T + t : t; }
  function baseCol(t) { return t; }

  // Children of every node sorted by the width column, widest first, cached per type.
  var sortedCache = {};
  function sortedChildren(t) {
    if (sortedCache[t]) return sortedCache[t];
    var tot = totals(newCol(t));
    var out = children.slice();
    var cmp = function (a, b) { return tot[b] - tot[a] || (names[fnOf[a]] < names[fnOf[b]] ? -1 : 1); };
    for (var n = 0; n < N; n++) {
      var s = childStart[n], e = childStart[n + 1];
      if (e - s > 1) {
        var part = Array.prototype.slice.call(out, s, e).sort(cmp);
        for (var k = 0; k < part.length; k++) out[s + k] = part[k];
      }
    }
    sortedCache[t] = out;
    return out;
  }

  // ---- formatting ---------------------------------------------------------
  function fmtNum(v, digits) {
    var a = Math.abs(v);
    if (a >= 100 || digits === 0) return v.toFixed(0);
    if (a >= 10) return v.toFixed(1);
    return v.toFixed(2);
  }
  function fmtValue(v, unit) {
    var sign = v < 0 ? '-' : '';
    var a = Math.abs(v);
    if (unit === 'bytes') {
      var u = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
      var k = 0;
      while (a >= 1024 && k < u.length - 1) { a /= 1024; k++; }
      return sign + (k === 0 ? a.toFixed(0) : fmtNum(a)) + ' ' + u[k];
    }
    var s = ['', 'k', 'M', 'G', 'T'];
    var j = 0;
    while (a >= 1000 && j < s.length - 1) { a /= 1000; j++; }
    return sign + (j === 0 ? a.toFixed(0) : fmtNum(a)) + s[j];
  }
  function fmtPct(part, whole) {
    if (!whole) return '0%';
    var p = 100 * part / whole;
    var a = Math.abs(p);
    if (a > 0 && a < 0.01) return (p < 0 ? '-' : '') + '<0.01%';
    return (a >= 10 ? p.toFixed(1) : p.toFixed(2)) + '%';
  }
  function signed(s, v) { return v > 0 ? '+' + s : s; }
  function esc(s) {
    return String(s).replace(/[&<>"']/g, function (c) {
      return { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[c];
    });
  }

  // ---- state ----------------------------------------------------------------
  var state = {
    type: D.initialType | 0,
    zoom: 0,
    orient: 'flame',
    view: 'graph',
    search: '',
    picked: -1,        // function picked in the table, highlighted in the graph
    sortKey: DIFF ? 'dcum' : 'flat',
    sortAsc: false
  };
  var unit = function () { return D.types[state.type].unit; };

  // ---- elements -------------------------------------------------------------
  var $ = function (id) { return document.getElementById(id); };
  var canvas = $('flame'), wrap = $('canvas-wrap'), tooltip = $('tooltip');
  var ctx = canvas.getContext('2d');
  // The hovered frame's outline lives on an overlay, so hovering never redraws the graph.
  var overlay = document.createElement('canvas');
  overlay.className = 'overlay';
  wrap.appendChild(overlay);
  var octx = overlay.getContext('2d');
  $('title').textContent = D.title;
  document.title = D.title;

  // ---- colours --------------------------------------------------------------
  function hash(s) {
    var h = 2166136261;
    for (var k = 0; k < s.length; k++) { h ^= s.charCodeAt(k); h = Math.imul(h, 16777619); }
    return h >>> 0;
  }
  var colourCache = new Array(F);
  function fnColour(f) {
    if (f < 0) return '#8a93a6';
    var c = colourCache[f];
    if (c) return c;
    var name = names[f], file = fnFile(f), h = hash(name);
    if (!file && name.charAt(0) === '(') {
      c = 'hsl(220, 9%, ' + (68 + h % 8) + '%)';                         // VM state: (GC), (V8 API)...
    } else if (/^(node:|internal\/|heapprof:)/.test(file)) {
      c = 'hsl(' + (185 + h % 25) + ', 42%, ' + (60 + (h >> 8) % 10) + '%)';  // runtime internals
    } else {
      c = 'hsl(' + (8 + h % 38) + ', ' + (72 + (h >> 8) % 16) + '%, ' + (58 + (h >> 16) % 10) + '%)';
    }
    colourCache[f] = c;
    return c;
  }
  var maxAbsDelta = {};
  // The 95 % half-width of a node's change that sampling alone explains
  // (both sides' variances, as heapprof diff's ±noise column), or null when
  // either profile cannot say how it was sampled.
  function changeNoise(node, t) {
    var vb = varTotals(baseCol(t)), vn = varTotals(newCol(t));
    return vb && vn ? 1.959963984540054 * Math.sqrt(vb[node] + vn[node]) : null;
  }
  function diffColour(node) {
    var t = state.type, nv = totals(newCol(t))[node], bv = totals(baseCol(t))[node];
    var d = nv - bv;
    var noise = changeNoise(node, t);
    if (noise !== null && Math.abs(d) <= noise) return 'rgb(233,228,220)';  // within the noise: as unchanged
    if (!(t in maxAbsDelta)) {
      var nt = totals(newCol(t)), bt = totals(baseCol(t)), m = 0;
      for (var k = 1; k < N; k++) m = Math.max(m, Math.abs(nt[k] - bt[k]));
      maxAbsDelta[t] = m;
    }
    var m2 = maxAbsDelta[t];
    var x = m2 > 0 ? Math.sqrt(Math.abs(d) / m2) : 0;
    var from = [233, 228, 220], to = d >= 0 ? [215, 64, 42] : [47, 111, 208];
    var rgb = from.map(function (v, k) { return Math.round(v + (to[k] - v) * x); });
    return 'rgb(' + rgb.join(',') + ')';
  }

  // ---- search and highlight --------------------------------------------------
  var matchFn = null;  // Uint8Array per function, or null when nothing is highlighted
  function compileSearch(text) {
    if (!text) return null;
    var re;
    try { re = new RegExp(text, 'i'); } catch (e) {
      re = new RegExp(text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'i');
    }
    var m = new Uint8Array(F);
    for (var f = 0; f < F; f++) m[f] = re.test(names[f]) || re.test(fnFile(f)) ? 1 : 0;
    return m;
  }
  function updateHighlight() {
    matchFn = null;
    if (state.picked >= 0) {
      matchFn = new Uint8Array(F);
      matchFn[state.picked] = 1;
    } else if (state.search) {
      matchFn = compileSearch(state.search);
    }
  }
  // Share of the profile under highlighted frames, each sample counted once.
  function matchShare() {
    var tot = totals(newCol(state.type));
    var inside = new Uint8Array(N), sum = 0, frames = 0, fns = {};
    for (var k = 1; k < N; k++) {
      var hit = matchFn[fnOf[k]] === 1;
      if (hit && tot[k] > 0) { frames++; fns[fnOf[k]] = 1; }
      if (hit && !inside[parent[k]]) sum += tot[k];
      inside[k] = inside[parent[k]] || hit ? 1 : 0;
    }
    return { value: sum, frames: frames, functions: Object.keys(fns).length };
  }

  // ---- layout ------------------------------------------------------------------
  var frames = [];   // laid-out rectangles of the current view
  var rows = [];     // frames per depth, sorted by x
  var cssW = 0, cssH = 0, rowCount = 0;
  var lastLayoutMs = 0, lastDrawMs = 0;

  function layout() {
    var t1 = performance.now();
    var W = cssW, t = state.type;
    var tot = totals(newCol(t));
    var kids = sortedChildren(t);
    frames = [];
    var chain = [];
    for (var n = state.zoom; ; n = parent[n]) { chain.push(n); if (n === 0) break; }
    chain.reverse();
    for (var d = 0; d < chain.length; d++) {
      frames.push({ node: chain[d], x: 0, w: W, depth: d, kind: chain[d] === state.zoom ? 'frame' : 'ancestor' });
    }
    var zt = tot[state.zoom];
    if (zt > 0) {
      var scale = W / zt;
      var stack = [state.zoom, 0, chain.length - 1];
      while (stack.length) {
        var dep = stack.pop(), x = stack.pop(), node = stack.pop();
        var mergedW = 0, mergedN = 0, mergedV = 0, mergedX = 0;
        for (var c = childStart[node], e = childStart[node + 1]; c < e; c++) {
          var k = kids[c], v = tot[k];
          if (v <= 0) break;  // sorted: the rest is empty
          var w = v * scale;
          if (w < MIN_W) {
            if (mergedN === 0) mergedX = x;
            mergedN++; mergedW += w; mergedV += v; x += w;
            continue;
          }
          frames.push({ node: k, x: x, w: w, depth: dep + 1, kind: 'frame' });
          stack.push(k, x, dep + 1);
          x += w;
        }
        if (mergedN > 0 && mergedW >= 0.5) {
          frames.push({ node: node, x: mergedX, w: mergedW, depth: dep + 1, kind: 'merged', count: mergedN, value: mergedV });
        }
      }
    }
    rowCount = 0;
    rows = [];
    for (var q = 0; q < frames.length; q++) {
      var fr = frames[q];
      if (fr.depth + 1 > rowCount) rowCount = fr.depth + 1;
      (rows[fr.depth] || (rows[fr.depth] = [])).push(fr);
    }
    for (var r = 0; r < rows.length; r++) if (rows[r]) rows[r].sort(function (a, b) { return a.x - b.x; });
    for (q = 0; q < frames.length; q++) {
      frames[q].y = state.orient === 'flame' ? (rowCount - 1 - frames[q].depth) * ROW : frames[q].depth * ROW;
    }
    lastLayoutMs = performance.now() - t1;
  }

  // ---- drawing -----------------------------------------------------------------
  var FONT = '12px ui-sans-serif, system-ui, -apple-system, "Segoe UI", Roboto, Arial, sans-serif';
  var charW = 7;
  function draw() {
    var t1 = performance.now();
    var dpr = window.devicePixelRatio || 1;
    cssH = rowCount * ROW;
    canvas.style.height = cssH + 'px';
    canvas.width = Math.max(1, Math.round(cssW * dpr));
    canvas.height = Math.max(1, Math.round(cssH * dpr));
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, cssW, cssH);
    ctx.font = FONT;
    ctx.textBaseline = 'middle';
    charW = ctx.measureText('abcdefghijklmnopqrstuvwxyz_ABCDEF.').width / 34 || 7;
    for (var q = 0; q < frames.length; q++) {
      var fr = frames[q];
      var f = fr.kind === 'merged' ? -2 : fnOf[fr.node];
      var dim = false, hit = false;
      if (matchFn && fr.kind !== 'merged') {
        hit = f >= 0 && matchFn[f] === 1;
        dim = !hit;
      } else if (matchFn) {
        dim = true;
      }
      var colour;
      if (fr.kind === 'merged') colour = '#d5d9e0';
      else if (hit) colour = '#d6246e';
      else if (DIFF && fr.node !== 0) colour = diffColour(fr.node);
      else colour = fnColour(f);
      ctx.globalAlpha = dim ? 0.28 : (fr.kind === 'ancestor' ? 0.6 : 1);
      ctx.fillStyle = colour;
      var gap = fr.w > 3 ? 1 : 0;
      ctx.fillRect(fr.x, fr.y, Math.max(fr.w - gap, 0.5), ROW - 1);
      if (fr.w >= LABEL_W) {
        var label = fr.kind === 'merged' ? fr.count + ' small frames' : fnName(f);
        var max = Math.floor((fr.w - 8) / charW);
        if (max >= 2) {
          if (label.length > max) label = label.slice(0, max - 1) + '\u2026';
          ctx.fillStyle = hit ? '#ffffff' : '#1b1f27';
          ctx.globalAlpha = dim ? 0.45 : 1;
          ctx.fillText(label, fr.x + 4, fr.y + ROW / 2);
        }
      }
    }
    ctx.globalAlpha = 1;
    overlay.style.height = cssH + 'px';
    overlay.width = canvas.width;
    overlay.height = canvas.height;
    octx.setTransform(dpr, 0, 0, dpr, 0, 0);
    hovered = null;
    lastDrawMs = performance.now() - t1;
  }

  // ---- status line, crumbs, summary -----------------------------------------------
  function renderStatus() {
    var t = state.type, tot = totals(newCol(t)), u = unit();
    // Too few samples for this sample type's shares to rank functions, above both views.
    var warning = (D.warnings && D.warnings[t]) || '';
    $('sampling-warning').textContent = warning;
    $('sampling-warning').hidden = !warning;
    var crumbs = $('crumbs');
    crumbs.textContent = '';
    if (state.zoom !== 0) {
      var chain = [];
      for (var n = state.zoom; n !== 0; n = parent[n]) chain.push(n);
      chain.reverse();
      var reset = document.createElement('button');
      reset.type = 'button';
      reset.id = 'reset-zoom';
      reset.textContent = '\u2190 all';
      reset.title = 'Zoom out to the whole profile (Esc)';
      reset.onclick = function () { setZoom(0); };
      crumbs.appendChild(reset);
      var shown = chain.length > 4 ? [chain[0], -1].concat(chain.slice(-3)) : chain;
      shown.forEach(function (node, idx) {
        var sep = document.createElement('span');
        sep.className = 'sep';
        sep.textContent = '\u203A';
        crumbs.appendChild(sep);
        if (node === -1) { var dots = document.createElement('span'); dots.className = 'sep'; dots.textContent = '\u2026'; crumbs.appendChild(dots); return; }
        if (idx === shown.length - 1) {
          var here = document.createElement('span');
          here.className = 'here';
          here.textContent = fnName(fnOf[node]);
          crumbs.appendChild(here);
        } else {
          var b = document.createElement('button');
          b.type = 'button';
          b.textContent = fnName(fnOf[node]);
          b.onclick = function () { setZoom(node); };
          crumbs.appendChild(b);
        }
      });
    } else {
      var hint = document.createElement('span');
      hint.textContent = 'Click a frame to zoom \u00B7 hover for details';
      crumbs.appendChild(hint);
    }

    var match = $('match');
    if (matchFn) {
      var s = matchShare();
      match.hidden = false;
      var what = state.picked >= 0 ? esc(fnName(state.picked)) : s.functions + ' function' + (s.functions === 1 ? '' : 's');
      match.innerHTML = 'Matched ' + what + ': ' + esc(fmtValue(s.value, u)) + ' (' + fmtPct(s.value, tot[0]) + ')' +
        '<button type="button" id="clear-match" title="Clear (Esc)">\u2715</button>';
      $('clear-match').onclick = clearHighlight;
      match.dataset.value = s.value;
      match.dataset.share = tot[0] ? s.value / tot[0] : 0;
    } else {
      match.hidden = true;
    }

    var summary = D.types[t].type + ' total ' + fmtValue(tot[0], u);
    if (DIFF) {
      var base = totals(baseCol(t))[0];
      summary = D.types[t].type + ': ' + fmtValue(base, u) + ' \u2192 ' + fmtValue(tot[0], u) +
        ' (' + signed(fmtValue(tot[0] - base, u), tot[0] - base) + ')';
      var sampled = changeNoise(0, t) !== null;
      $('summary').innerHTML = '<span class="legend">shrank <i></i> grew</span> &nbsp; ' + esc(summary) +
        (sampled ? ' &nbsp; <span class="hint">changes within sampling noise (95 %) are not coloured</span>' : '');
    } else {
      if (state.zoom !== 0) summary += ' \u00B7 zoomed: ' + fmtValue(tot[state.zoom], u) + ' (' + fmtPct(tot[state.zoom], tot[0]) + ')';
      $('summary').textContent = summary;
    }
  }

  // ---- tooltip -------------------------------------------------------------------------
  function frameAt(mx, my) {
    var depthIdx = state.orient === 'flame' ? rowCount - 1 - Math.floor(my / ROW) : Math.floor(my / ROW);
    var row = rows[depthIdx];
    if (!row) return null;
    var lo = 0, hi = row.length - 1;
    while (lo <= hi) {
      var mid = (lo + hi) >> 1, fr = row[mid];
      if (mx < fr.x) hi = mid - 1;
      else if (mx >= fr.x + fr.w) lo = mid + 1;
      else return fr;
    }
    return null;
  }
  function showTooltip(fr, cx, cy) {
    var t = state.type, u = unit(), all = totals(newCol(t))[0];
    var html;
    if (fr.kind === 'merged') {
      html = '<div class="fn">' + fr.count + ' small frames</div>' +
        '<table><tr><td class="k">Total</td><td>' + esc(fmtValue(fr.value, u)) + ' (' + fmtPct(fr.value, all) + ')</td></tr></table>' +
        '<div class="hint">' + (fr.node === state.zoom ? 'Each is under a pixel wide: search or use the table to find them'
          : 'Click to zoom into ' + esc(fnName(fnOf[fr.node]))) + '</div>';
    } else {
      var n = fr.node, f = fnOf[n];
      var tot = totals(newCol(t))[n], self = D.self[newCol(t)][n];
      var where = fnWhere(f);
      html = '<div class="fn">' + esc(fnName(f)) + '</div>' + (where ? '<div class="file">' + esc(where) + '</div>' : '') + '<table>';
      if (DIFF) {
        var bt = totals(baseCol(t))[n], bs = D.self[baseCol(t)][n], noise = changeNoise(n, t);
        html += '<tr><td class="k">Total</td><td>' + esc(fmtValue(bt, u)) + ' \u2192 ' + esc(fmtValue(tot, u)) + '</td></tr>' +
          '<tr><td class="k">Change</td><td>' + esc(signed(fmtValue(tot - bt, u), tot - bt)) +
          (bt > 0 ? ' (' + signed(fmtPct(tot - bt, bt), tot - bt) + ')' : ' (new)') + '</td></tr>' +
          (noise === null ? '' : '<tr><td class="k">Noise</td><td>\u00b1' + esc(fmtValue(noise, u)) +
            (Math.abs(tot - bt) <= noise ? ', the change is within it' : ', the change is beyond it') + '</td></tr>') +
          '<tr><td class="k">Self</td><td>' + esc(fmtValue(bs, u)) + ' \u2192 ' + esc(fmtValue(self, u)) + '</td></tr>';
      } else {
        var vt = varTotals(newCol(t)), vs = D.variance && D.variance[newCol(t)];
        var totErr = vt ? fmtError(shareError(tot, vt[n], all, vt[0])) : '';
        var selfErr = vt ? fmtError(shareError(self, vs[n], all, vt[0])) : '';
        html += '<tr><td class="k">Total</td><td>' + esc(fmtValue(tot, u)) + ' (' + fmtPct(tot, all) + totErr + ')</td></tr>' +
          '<tr><td class="k">Self</td><td>' + esc(fmtValue(self, u)) + ' (' + fmtPct(self, all) + selfErr + ')</td></tr>';
        if (vt) html += '<tr><td class="k"></td><td class="hint">\u00b1 95 % sampling error, in points</td></tr>';
        if (state.zoom !== 0 && n !== 0) {
          html += '<tr><td class="k">Of zoom</td><td>' + fmtPct(tot, totals(newCol(t))[state.zoom]) + '</td></tr>';
        }
      }
      html += '</table><div class="hint">' + (n === state.zoom && n !== 0 ? 'Click to zoom out' : 'Click to zoom in') + '</div>';
    }
    tooltip.innerHTML = html;
    tooltip.hidden = false;
    var r = tooltip.getBoundingClientRect();
    var x = cx + 14, y = cy + 14;
    if (x + r.width > window.innerWidth - 8) x = Math.max(8, cx - r.width - 14);
    if (y + r.height > window.innerHeight - 8) y = Math.max(8, cy - r.height - 14);
    tooltip.style.left = x + 'px';
    tooltip.style.top = y + 'px';
  }
  var hovered = null;
  function outline(fr) {
    if (fr === hovered) return;
    octx.clearRect(0, 0, cssW, cssH);
    hovered = fr;
    if (!fr) return;
    octx.strokeStyle = '#1f2430';
    octx.lineWidth = 1.5;
    octx.strokeRect(fr.x + 0.75, fr.y + 0.75, Math.max(fr.w - 1.5 - (fr.w > 3 ? 1 : 0), 0.5), ROW - 2.5);
  }
  canvas.addEventListener('mousemove', function (ev) {
    var rect = canvas.getBoundingClientRect();
    var fr = frameAt(ev.clientX - rect.left, ev.clientY - rect.top);
    outline(fr);
    if (fr) showTooltip(fr, ev.clientX, ev.clientY); else tooltip.hidden = true;
  });
  canvas.addEventListener('mouseleave', function () { tooltip.hidden = true; outline(null); });
  canvas.addEventListener('click', function (ev) {
    var rect = canvas.getBoundingClientRect();
    var fr = frameAt(ev.clientX - rect.left, ev.clientY - rect.top);
    if (!fr) return;
    if (fr.kind === 'merged') { if (fr.node !== state.zoom) setZoom(fr.node); }
    else if (fr.node === state.zoom) setZoom(parent[fr.node]);
    else setZoom(fr.node);
  });

  // ---- table ------------------------------------------------------------------------------
  // Flat and cumulative value per function; cum counts each sample once even
  // when the function recurses (only its outermost frame on a path counts).
  function functionTotals(col) {
    var r = functionSums(totals(col), D.self[col]);
    var vt = varTotals(col);
    if (vt) {
      var v = functionSums(vt, D.variance[col]);
      r.flatVar = v.flat;
      r.cumVar = v.cum;
      r.allVar = vt[0];
    }
    return r;
  }
  function functionSums(tot, self) {
    var flat = new Float64Array(F), cum = new Float64Array(F), onPath = new Int32Array(F);
    var stack = [0];
    while (stack.length) {
      var x = stack.pop();
      if (x < 0) { var g = fnOf[~x]; if (g >= 0) onPath[g]--; continue; }
      var f = fnOf[x];
      if (f >= 0) {
        flat[f] += self[x];
        if (onPath[f] === 0) cum[f] += tot[x];
        onPath[f]++;
      }
      stack.push(~x);
      for (var c = childStart[x]; c < childStart[x + 1]; c++) stack.push(children[c]);
    }
    return { flat: flat, cum: cum };
  }
  var columns = DIFF ? [
    { key: 'dflat', label: 'Flat \u0394', sortable: true },
    { key: 'dcum', label: 'Cum \u0394', sortable: true },
    { key: 'bcum', label: 'Cum (base)', sortable: true },
    { key: 'cum', label: 'Cum (new)', sortable: true },
    { key: 'name', label: 'Function' },
    { key: 'loc', label: 'Location' }
  ] : [
    { key: 'flat', label: 'Flat', sortable: true },
    { key: 'flatp', label: 'Flat %' },
    { key: 'cum', label: 'Cum', sortable: true },
    { key: 'cump', label: 'Cum %' },
    { key: 'name', label: 'Function' },
    { key: 'loc', label: 'Location' }
  ];
  function renderTable() {
    var t = state.type, u = unit();
    var cur = functionTotals(newCol(t));
    var base = DIFF ? functionTotals(baseCol(t)) : null;
    var all = totals(newCol(t))[0];
    var head = $('table-head');
    head.textContent = '';
    columns.forEach(function (col) {
      var th = document.createElement('th');
      th.textContent = col.label;
      th.className = (col.key === 'name' ? 'name' : col.key === 'loc' ? 'loc' : '') +
        (col.sortable ? ' sortable' : '') + (state.sortKey === col.key ? ' sorted' + (state.sortAsc ? ' asc' : '') : '');
      th.dataset.key = col.key;
      if (col.sortable) {
        th.onclick = function () {
          if (state.sortKey === col.key) state.sortAsc = !state.sortAsc;
          else { state.sortKey = col.key; state.sortAsc = false; }
          renderTable();
        };
      }
      head.appendChild(th);
    });
    var value = function (f, key) {
      switch (key) {
        case 'flat': return cur.flat[f];
        case 'cum': return cur.cum[f];
        case 'bcum': return base.cum[f];
        case 'dflat': return cur.flat[f] - base.flat[f];
        case 'dcum': return cur.cum[f] - base.cum[f];
      }
      return 0;
    };
    var search = state.search ? compileSearch(state.search) : null;
    var ids = [];
    for (var f = 0; f < F; f++) {
      if (search && !search[f]) continue;
      if (cur.cum[f] === 0 && cur.flat[f] === 0 && (!base || (base.cum[f] === 0 && base.flat[f] === 0))) continue;
      ids.push(f);
    }
    var key = state.sortKey, dir = state.sortAsc ? 1 : -1;
    ids.sort(function (a, b) { return dir * (value(a, key) - value(b, key)) || (names[a] < names[b] ? -1 : 1); });
    var body = $('table-body');
    var html = [];
    var shown = Math.min(ids.length, MAX_TABLE_ROWS);
    for (var r = 0; r < shown; r++) {
      f = ids[r];
      var cells = '';
      if (DIFF) {
        var df = value(f, 'dflat'), dc = value(f, 'dcum');
        cells += '<td class="' + (df > 0 ? 'up' : df < 0 ? 'down' : '') + '">' + esc(signed(fmtValue(df, u), df)) + '</td>';
        cells += '<td class="' + (dc > 0 ? 'up' : dc < 0 ? 'down' : '') + '">' + esc(signed(fmtValue(dc, u), dc)) + '</td>';
        cells += '<td>' + esc(fmtValue(base.cum[f], u)) + '</td><td>' + esc(fmtValue(cur.cum[f], u)) + '</td>';
      } else {
        cells += '<td>' + esc(fmtValue(cur.flat[f], u)) + '</td>';
        cells += '<td class="pct"><span class="track"><span class="fill" style="width:' + (all ? Math.max(0, Math.min(100, 100 * cur.flat[f] / all)).toFixed(1) : 0) + '%"></span></span><span class="num">' + fmtPct(cur.flat[f], all) + (cur.flatVar ? fmtError(shareError(cur.flat[f], cur.flatVar[f], all, cur.allVar)) : '') + '</span></td>';
        cells += '<td>' + esc(fmtValue(cur.cum[f], u)) + '</td>';
        cells += '<td class="pct"><span class="track"><span class="fill" style="width:' + (all ? Math.max(0, Math.min(100, 100 * cur.cum[f] / all)).toFixed(1) : 0) + '%"></span></span><span class="num">' + fmtPct(cur.cum[f], all) + (cur.cumVar ? fmtError(shareError(cur.cum[f], cur.cumVar[f], all, cur.allVar)) : '') + '</span></td>';
      }
      cells += '<td class="name" title="' + esc(names[f]) + '">' + esc(names[f]) + '</td><td class="loc">' + esc(fnWhere(f)) + '</td>';
      html.push('<tr data-fn="' + f + '"' + (state.picked === f ? ' class="picked"' : '') + '>' + cells + '</tr>');
    }
    body.innerHTML = html.join('');
    $('table-note').textContent = ids.length > shown ? 'Showing the first ' + shown + ' of ' + ids.length + ' functions.' :
      ids.length + ' function' + (ids.length === 1 ? '' : 's') + (search ? ' matching the search' : '') +
      '. Click a row to highlight the function in the graph.';
  }
  $('table-body').addEventListener('click', function (ev) {
    var tr = ev.target.closest('tr');
    if (!tr) return;
    state.picked = +tr.dataset.fn;
    updateHighlight();
    setView('graph');
  });

  // ---- controls ------------------------------------------------------------------------------
  var typeBar = $('types');
  D.types.forEach(function (st, t) {
    var b = document.createElement('button');
    b.type = 'button';
    b.textContent = st.type;
    b.dataset.type = st.type;
    b.title = st.type + ' (' + st.unit + ')';
    b.onclick = function () { setType(t); };
    typeBar.appendChild(b);
  });
  if (T < 2) typeBar.hidden = true;
  document.querySelectorAll('#orient button').forEach(function (b) {
    b.onclick = function () { state.orient = b.dataset.orient; render(); };
  });
  document.querySelectorAll('#views button').forEach(function (b) {
    b.onclick = function () { setView(b.dataset.view); };
  });
  var searchBox = $('search');
  searchBox.addEventListener('input', function () {
    state.search = searchBox.value.trim();
    state.picked = -1;
    updateHighlight();
    render();
  });
  function clearHighlight() {
    state.search = '';
    state.picked = -1;
    searchBox.value = '';
    updateHighlight();
    render();
  }
  document.addEventListener('keydown', function (ev) {
    if (ev.key === '/' && document.activeElement !== searchBox) { ev.preventDefault(); searchBox.focus(); return; }
    if (ev.key === 'Escape') {
      if (document.activeElement === searchBox || matchFn) clearHighlight();
      else if (state.zoom !== 0) setZoom(0);
    }
  });
  window.addEventListener('resize', function () {
    if (resizeQueued) return;
    resizeQueued = true;
    requestAnimationFrame(function () { resizeQueued = false; render(); });
  });
  var resizeQueued = false;

  function setZoom(node) { state.zoom = node; render(); }
  function setType(t) { state.type = t; render(); }
  function setView(v) { state.view = v; render(); }

  var detailList = $('detail-list');
  (D.details || []).forEach(function (line) {
    var li = document.createElement('li');
    li.textContent = line;
    detailList.appendChild(li);
  });
  if (!D.details || !D.details.length) $('details').hidden = true;

  // ---- render --------------------------------------------------------------------------------
  function render() {
    typeBar.querySelectorAll('button').forEach(function (b, t) {
      b.classList.toggle('on', t === state.type);
      b.disabled = totals(newCol(t))[0] === 0 && (!DIFF || totals(baseCol(t))[0] === 0);
    });
    document.querySelectorAll('#orient button').forEach(function (b) { b.classList.toggle('on', b.dataset.orient === state.orient); });
    document.querySelectorAll('#views button').forEach(function (b) { b.classList.toggle('on', b.dataset.view === state.view); });
    $('orient').style.visibility = state.view === 'graph' ? 'visible' : 'hidden';
    $('graph-view').hidden = state.view !== 'graph';
    $('table-view').hidden = state.view !== 'table';
    tooltip.hidden = true;
    renderStatus();
    if (state.view === 'table') { renderTable(); return; }
    var tot = totals(newCol(state.type));
    var empty = $('empty');
    if (tot[0] <= 0) {
      empty.hidden = false;
      empty.textContent = 'No ' + D.types[state.type].type + ' in this profile' + (DIFF ? ' (new side)' : '') + '.';
      frames = []; rows = []; rowCount = 0;
      canvas.style.display = 'none';
      return;
    }
    empty.hidden = true;
    canvas.style.display = '';
    cssW = Math.max(200, wrap.clientWidth);
    layout();
    draw();
  }

  updateHighlight();
  render();
  var firstRenderMs = performance.now() - t0;

  // Read-only hook for tests and tooling: what is drawn, and the view state.
  window.heapprof = Object.freeze({
    nodes: N,
    functions: F,
    firstRenderMs: firstRenderMs,
    frames: function () {
      return frames.map(function (fr) {
        var col = newCol(state.type);
        return {
          node: fr.node, kind: fr.kind, depth: fr.depth,
          name: fr.kind === 'merged' ? fr.count + ' small frames' : fnName(fnOf[fr.node]),
          x: fr.x, y: fr.y, w: fr.w, h: ROW - 1,
          total: fr.kind === 'merged' ? fr.value : totals(col)[fr.node],
          self: fr.kind === 'merged' ? 0 : D.self[col][fr.node],
          highlighted: !!(matchFn && fr.kind !== 'merged' && fnOf[fr.node] >= 0 && matchFn[fnOf[fr.node]])
        };
      });
    },
    state: function () {
      return {
        sampleType: D.types[state.type].type, zoom: state.zoom, zoomName: fnName(fnOf[state.zoom]),
        orient: state.orient, view: state.view, search: state.search,
        picked: state.picked >= 0 ? names[state.picked] : null,
        canvasWidth: cssW, canvasHeight: cssH, layoutMs: lastLayoutMs, drawMs: lastDrawMs
      };
    }
  });
})();
