// warpwise profile view: the page behind the VS Code webview panel and `warpwise advise --format html`.
// Reads the JSON model (server/profile_view.py kernel_data) from #warpwise-data and draws the source with a
// heat gutter and a stacked stall-reason bar per line (rows rendered lazily: only those in view exist, so
// a 5,000-line file costs what a screenful costs), the SASS of the selected line with per-instruction
// samples and blame arrows (d3-shape links) from each stalled instruction to the one it is blamed on, and
// the ranked advice. Clicking a line or an advice (or Enter) reveals it in the editor through postMessage.
// Bundled by esbuild into server/webview/profile.js (npm run build:webview); no network.
import { scaleLinear, scaleOrdinal } from 'd3-scale';
import { schemeTableau10 } from 'd3-scale-chromatic';
import { linkHorizontal } from 'd3-shape';

const vscode = typeof acquireVsCodeApi === 'function' ? acquireVsCodeApi() : undefined;
const ROW = 18;
const OVERSCAN = 30;

const data = JSON.parse(document.getElementById('warpwise-data').textContent || '{"kernels":[]}');
const saved = (vscode && vscode.getState()) || {};
const state = { kernel: saved.kernel || 0, file: saved.file || null, line: saved.line || null };

const el = (tag, cls, text) => {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
};
const pct = (x) => `${(100 * x).toFixed(1)}%`;
const num = (x) => Math.round(x).toLocaleString('en-US');

function kernel() {
  return data.kernels[state.kernel] || data.kernels[0];
}

/** Stall reasons of the kernel, most samples first, each with a colour. */
function reasonColours(k) {
  const tot = new Map();
  for (const l of k.lines) for (const [r, v] of Object.entries(l.stalls)) tot.set(r, (tot.get(r) || 0) + v);
  const order = [...tot.entries()].sort((a, b) => b[1] - a[1]).map(([r]) => r);
  const colour = scaleOrdinal(schemeTableau10).domain(order);
  return { order, colour, tot };
}

/** A fixed-width box holding a bar of ``width`` px split into one segment per stall reason. */
function stacked(stalls, total, width, colours, box = 90) {
  const outer = el('span', 'barbox');
  outer.style.width = `${box}px`;
  const bar = el('span', 'bar');
  bar.style.width = `${width}px`;
  outer.appendChild(bar);
  if (!total) return outer;
  for (const r of colours.order) {
    const v = stalls[r];
    if (!v) continue;
    const seg = el('span', 'seg');
    seg.style.width = `${(100 * v) / total}%`;
    seg.style.background = colours.colour(r);
    seg.title = `${r}: ${num(v)} warp samples`;
    bar.appendChild(seg);
  }
  return outer;
}

function post(msg) {
  if (vscode) vscode.postMessage(msg);
}

function save() {
  if (vscode) vscode.setState({ kernel: state.kernel, file: state.file, line: state.line });
}

// ---- header and legend ---------------------------------------------------------------------------------
function drawHeader(k, colours) {
  const head = document.getElementById('head');
  head.replaceChildren();
  if (data.kernels.length > 1) {
    const sel = el('select');
    sel.setAttribute('aria-label', 'Kernel');
    data.kernels.forEach((kk, i) => {
      const o = el('option', '', kk.name);
      o.value = String(i);
      o.selected = i === state.kernel;
      sel.appendChild(o);
    });
    sel.onchange = () => {
      state.kernel = Number(sel.value);
      state.file = null;
      state.line = null;
      drawAll();
    };
    head.appendChild(sel);
  } else {
    head.appendChild(el('h1', '', k.name));
  }
  const files = Object.keys(k.files);
  if (files.length > 1) {
    const sel = el('select');
    sel.setAttribute('aria-label', 'Source file');
    for (const f of files) {
      const o = el('option', '', f.split('/').pop());
      o.value = f;
      o.selected = f === state.file;
      sel.appendChild(o);
    }
    sel.onchange = () => {
      state.file = sel.value;
      state.line = null;
      drawAll();
    };
    head.appendChild(sel);
  }
  const launches = `${k.launches} launch${k.launches === 1 ? '' : 'es'}`;
  const reports = k.reports.length > 1 ? ` (active; ${k.reports.length} reports hold this kernel)` : '';
  head.appendChild(el('span', 'meta', `${num(k.total)} warp samples · ${launches} · ${k.arch}${k.device ? ` · ${k.device}` : ''}`));
  head.appendChild(el('span', 'meta', `report ${k.report.split('/').pop()}${reports}`));
  if (k.launches > 1) head.appendChild(el('span', 'meta', k.rule));
  if (k.bound) head.appendChild(el('span', 'bound', k.bound));
  // the analysis' notes (no -lineinfo, -G build, device-runtime samples ...), as the text report has them
  if (k.notes && k.notes.length) {
    const ul = el('ul', 'notes');
    ul.setAttribute('aria-label', 'Notes');
    for (const n of k.notes) ul.appendChild(el('li', '', `note: ${n}`));
    head.appendChild(ul);
  }
  const legend = document.getElementById('legend');
  legend.replaceChildren();
  for (const r of colours.order.slice(0, 12)) {
    const item = el('span', 'lg');
    const key = el('span', 'key');
    key.style.background = colours.colour(r);
    item.append(key, `${r} ${pct(colours.tot.get(r) / Math.max(1, k.total))}`);
    legend.appendChild(item);
  }
}

// ---- source pane (rendered lazily) -----------------------------------------------------------------------
let view = null;

function drawSource(k, colours) {
  const files = Object.keys(k.files);
  if (!state.file || !k.files[state.file]) {
    // the file holding most samples
    const per = new Map();
    for (const l of k.lines) per.set(l.file, (per.get(l.file) || 0) + l.samples);
    state.file = [...per.entries()].sort((a, b) => b[1] - a[1]).map(([f]) => f).find((f) => k.files[f]) || files[0];
  }
  const text = k.files[state.file] || [];
  const stats = new Map(k.lines.filter((l) => l.file === state.file).map((l) => [l.line, l]));
  const max = Math.max(1, ...[...stats.values()].map((l) => l.samples));
  const heat = scaleLinear().domain([0, max]).range([0, 1]);
  const hot = [...stats.keys()].sort((a, b) => a - b);
  const scroll = document.getElementById('src-scroll');
  const spacer = document.getElementById('src-spacer');
  spacer.replaceChildren();
  spacer.style.height = `${text.length * ROW}px`;
  const rows = new Map();
  function row(n) {
    const r = el('div', 'row');
    r.id = `L${n}`;
    r.setAttribute('role', 'option');
    r.dataset.line = String(n);
    r.style.top = `${(n - 1) * ROW}px`;
    const st = stats.get(n);
    const h = el('span', 'heat');
    if (st) {
      h.style.background = `rgba(var(--w-heat), ${0.15 + 0.85 * heat(st.samples)})`;
      h.title = `${pct(st.samples / Math.max(1, k.total))} of the kernel's warp samples`;
    }
    r.append(el('span', 'ln', String(n)), h);
    r.appendChild(st ? stacked(st.stalls, st.samples, Math.max(2, 64 * heat(st.samples)), colours, 64) : stacked({}, 0, 0, colours, 64));
    r.appendChild(el('span', 'pct', st ? pct(st.samples / Math.max(1, k.total)) : ''));
    r.appendChild(el('span', 'code', text[n - 1] || ' '));
    if (n === state.line) {
      r.classList.add('sel');
      r.setAttribute('aria-selected', 'true');
    }
    r.onclick = () => select(n, true);
    return r;
  }
  function render() {
    const first = Math.max(1, Math.floor(scroll.scrollTop / ROW) - OVERSCAN);
    const last = Math.min(text.length, Math.ceil((scroll.scrollTop + scroll.clientHeight) / ROW) + OVERSCAN);
    for (const [n, r] of rows) {
      if (n < first || n > last) {
        r.remove();
        rows.delete(n);
      }
    }
    for (let n = first; n <= last; n++) {
      if (!rows.has(n)) {
        const r = row(n);
        rows.set(n, r);
        spacer.appendChild(r);
      }
    }
  }
  function select(n, reveal) {
    state.line = n;
    save();
    for (const r of rows.values()) {
      const on = Number(r.dataset.line) === n;
      r.classList.toggle('sel', on);
      if (on) r.setAttribute('aria-selected', 'true');
      else r.removeAttribute('aria-selected');
    }
    scroll.setAttribute('aria-activedescendant', `L${n}`);
    const top = (n - 1) * ROW;
    if (top < scroll.scrollTop || top + ROW > scroll.scrollTop + scroll.clientHeight) {
      scroll.scrollTop = Math.max(0, top - scroll.clientHeight / 3);
    }
    render();
    drawSass(k, colours);
    if (reveal) post({ type: 'reveal', file: state.file, line: n });
  }
  scroll.onscroll = render;
  scroll.onkeydown = (e) => {
    const cur = state.line || hot[0] || 1;
    const page = Math.max(1, Math.floor(scroll.clientHeight / ROW) - 1);
    let next = null;
    if (e.key === 'ArrowDown') next = Math.min(text.length, cur + 1);
    else if (e.key === 'ArrowUp') next = Math.max(1, cur - 1);
    else if (e.key === 'PageDown') next = Math.min(text.length, cur + page);
    else if (e.key === 'PageUp') next = Math.max(1, cur - page);
    else if (e.key === 'Home') next = 1;
    else if (e.key === 'End') next = text.length;
    else if (e.key === 'n') next = hot.find((l) => l > cur) ?? cur;
    else if (e.key === 'p') next = [...hot].reverse().find((l) => l < cur) ?? cur;
    else if (e.key === 'Enter' || e.key === ' ') {
      select(cur, true);
      e.preventDefault();
      return;
    }
    if (next !== null) {
      select(next, false);
      e.preventDefault();
    }
  };
  view = { select };
  if (!state.line) {
    state.line = [...stats.values()].sort((a, b) => b.samples - a.samples)[0]?.line || 1;
  }
  scroll.scrollTop = Math.max(0, (state.line - 1) * ROW - scroll.clientHeight / 3);
  render();
}

// ---- SASS pane with blame arrows ------------------------------------------------------------------------
function drawSass(k, colours) {
  const pane = document.getElementById('sass');
  pane.replaceChildren(el('h2', '', `SASS of line ${state.line}`));
  const byId = new Map(k.sass.map((s) => [s.id, s]));
  const own = k.sass.filter((s) => s.file === state.file && s.line === state.line);
  if (own.length === 0) {
    pane.appendChild(el('div', 'empty', 'No instructions on this line.'));
    return;
  }
  const ownIds = new Set(own.map((s) => s.id));
  const edges = k.blame.filter((b) => ownIds.has(b.use) && byId.has(b.def));
  const shown = new Map(own.map((s) => [s.id, s]));
  for (const b of edges) shown.set(b.def, byId.get(b.def));
  const list = [...shown.values()].sort((a, b) => (a.function === b.function ? a.pc - b.pc : a.function < b.function ? -1 : 1));
  const max = Math.max(1, ...list.map((s) => s.samples));
  const body = el('div', 'sass-body');
  body.setAttribute('role', 'table');
  const index = new Map();
  list.forEach((s, i) => {
    index.set(s.id, i);
    const r = el('div', `ins${ownIds.has(s.id) ? '' : ' ctx'}`);
    r.setAttribute('role', 'row');
    // samples and stall bar before the text, so a narrow pane keeps the numbers in view
    r.append(el('span', 'pc', `${s.pc.toString(16).padStart(4, '0')}`), el('span', 'n', s.samples ? num(s.samples) : ''));
    r.appendChild(stacked(s.stalls, s.samples, Math.max(2, (70 * s.samples) / max), colours, 70));
    r.appendChild(el('span', 'txt', s.text));
    if (!ownIds.has(s.id)) r.appendChild(el('span', 'where', `line ${s.line}`));
    r.title = Object.entries(s.stalls).sort((a, b) => b[1] - a[1]).slice(0, 4).map(([r2, v]) => `${r2} ${num(v)}`).join(', ');
    body.appendChild(r);
  });
  const svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
  svg.setAttribute('class', 'arrows');
  svg.setAttribute('width', '64');
  svg.setAttribute('height', String(list.length * ROW));
  svg.setAttribute('aria-hidden', 'true');
  const defs = document.createElementNS(svg.namespaceURI, 'defs');
  const wmax = Math.max(1, ...edges.map((e) => e.samples));
  const width = scaleLinear().domain([0, wmax]).range([1, 5]);
  const link = linkHorizontal().x((d) => d[0]).y((d) => d[1]);
  const reasons = new Set();
  const drawn = edges.filter((b) => b.use !== b.def).sort((a, b) => a.samples - b.samples).slice(-40);
  drawn.forEach((b, i) => {
    reasons.add(b.reason);
    const y1 = index.get(b.use) * ROW + ROW / 2;
    const y2 = index.get(b.def) * ROW + ROW / 2;
    const bend = 58 - ((i * 7) % 48);
    const p = document.createElementNS(svg.namespaceURI, 'path');
    // from the stalled instruction out to the left and back in to the instruction it waits for
    const mid = [bend, (y1 + y2) / 2];
    p.setAttribute('d', link({ source: [62, y1], target: mid }) + link({ source: mid, target: [62, y2] }));
    p.setAttribute('class', 'edge');
    p.setAttribute('stroke', colours.colour(b.reason));
    p.setAttribute('stroke-width', String(width(b.samples)));
    p.setAttribute('marker-end', `url(#arrow-${CSS.escape(b.reason)})`);
    const t = document.createElementNS(svg.namespaceURI, 'title');
    t.textContent = `${b.reason}: ${num(b.samples)} warp samples blamed on ${byId.get(b.def).opcode}, ${b.distance} instruction${b.distance === 1 ? '' : 's'} earlier`;
    p.appendChild(t);
    svg.appendChild(p);
  });
  for (const r of reasons) {
    const m = document.createElementNS(svg.namespaceURI, 'marker');
    m.setAttribute('id', `arrow-${r}`);
    m.setAttribute('viewBox', '0 0 10 10');
    m.setAttribute('refX', '9');
    m.setAttribute('refY', '5');
    m.setAttribute('markerUnits', 'userSpaceOnUse'); // the same head whatever the edge's width
    m.setAttribute('markerWidth', '8');
    m.setAttribute('markerHeight', '8');
    m.setAttribute('orient', 'auto');
    const tip = document.createElementNS(svg.namespaceURI, 'path');
    tip.setAttribute('d', 'M0,0 L10,5 L0,10 z');
    tip.setAttribute('fill', colours.colour(r));
    m.appendChild(tip);
    defs.appendChild(m);
  }
  svg.prepend(defs);
  body.prepend(svg);
  pane.appendChild(body);
  const n = edges.length;
  pane.appendChild(el('div', 'empty', n ? `${n} blame edge${n === 1 ? '' : 's'}: arrows run from each stalled instruction to the instruction it waits for (width: warp samples).` : 'No stalls on this line are blamed on another instruction.'));
}

// ---- advice -----------------------------------------------------------------------------------------------
function drawAdvice(k) {
  const pane = document.getElementById('advice');
  pane.replaceChildren(el('h2', '', 'Advice, ranked by estimated speedup'));
  if (k.advice.length === 0) {
    pane.appendChild(el('div', 'empty', 'No advice for this kernel.'));
    return;
  }
  const ol = el('ol');
  for (const a of k.advice) {
    const li = el('li');
    const b = el('button', 'adv');
    b.type = 'button';
    b.append(el('span', 'name', a.optimizer), ' ', el('span', 'sp', `${a.speedup.toFixed(2)}×`));
    if (a.line) b.append(` · ${a.file && a.file !== state.file ? `${a.file.split('/').pop()}:` : 'line '}${a.line}`);
    if (a.confidence) b.append(el('span', 'sub', a.confidence));
    if (a.formula) {
      const inputs = Object.entries(a.inputs).map(([n, v]) => `${n} = ${Number.isInteger(v) ? num(v) : v.toPrecision(4)}`).join(', ');
      b.append(el('span', 'sub', `${a.formula}${inputs ? ` with ${inputs}` : ''}${a.equation ? ` (${a.equation})` : ''}`));
    }
    if (a.hint) b.append(el('span', 'sub', a.hint));
    if (a.why) b.append(el('span', 'sub why', a.why));
    b.onclick = () => {
      if (!a.line) return;
      if (a.file && a.file !== state.file && k.files[a.file]) {
        state.file = a.file;
        drawAll(a.line);
      } else if (view) view.select(a.line, false);
      post({ type: 'reveal', file: a.file || state.file, line: a.line });
    };
    li.appendChild(b);
    ol.appendChild(li);
  }
  pane.appendChild(ol);
}

function drawAll(line) {
  const k = kernel();
  if (!k) {
    document.getElementById('head').replaceChildren(el('h1', '', 'warpwise: no profiled kernel'));
    return;
  }
  if (line) state.line = line;
  const colours = reasonColours(k);
  drawHeader(k, colours);
  drawSource(k, colours);
  drawSass(k, colours);
  drawAdvice(k);
  save();
}

window.addEventListener('message', (e) => {
  const m = e.data;
  if (m && m.type === 'select' && view && typeof m.line === 'number') view.select(m.line, false);
});
drawAll();
document.getElementById('src-scroll').focus();
