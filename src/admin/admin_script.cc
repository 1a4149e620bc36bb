// The admin page's script (admin_page.h). It reads /describe and /metrics
// every two seconds and /tap as server-sent events, and builds the page
// with DOM calls and textContent only: names, paths and headers from the
// network are never parsed as HTML. Its memory is bounded however long
// the page stays open: five minutes of rate history, 200 tap rows.
#include "src/admin/admin_page.h"

namespace mesh::internal {

const char kAdminJs[] = R"js('use strict';
(function () {
  const POLL_MS = 2000;
  const HISTORY = 150;          // points: five minutes at one per poll
  const TAP_ROWS = 200;
  const COLORS = ['#1f6feb', '#d9480f', '#2b8a3e', '#ae3ec9', '#e8590c',
                  '#0c8599', '#c2255c', '#5c940d'];

  // --- small helpers -------------------------------------------------
  function el(tag, attrs, children) {
    const node = document.createElement(tag);
    if (attrs) {
      for (const [k, v] of Object.entries(attrs)) {
        if (v === undefined || v === null) continue;
        if (k === 'class') node.className = v;
        else if (k === 'text') node.textContent = v;
        // Through the CSSOM: the page's policy refuses style attributes.
        else if (k === 'style') Object.assign(node.style, v);
        else node.setAttribute(k, v);
      }
    }
    for (const c of children || []) {
      if (c === null || c === undefined) continue;
      node.append(typeof c === 'string' ? document.createTextNode(c) : c);
    }
    return node;
  }
  function fmt(x, digits) {
    if (x === null || x === undefined || Number.isNaN(x)) return '\u2013';
    if (!Number.isFinite(x)) return '\u221e';
    return x.toFixed(digits === undefined ? 1 : digits);
  }
  function pct(x) { return x === null ? '\u2013' : (100 * x).toFixed(1) + ' %'; }
  function table(headers, rows, numeric) {
    const head = el('tr', null, headers.map((h, i) =>
        el('th', {scope: 'col', class: numeric && numeric[i] ? 'num' : null,
                  text: h})));
    const body = rows.map(r => el('tr', null, r.map((c, i) => {
      if (c instanceof Node) return el('td', null, [c]);
      return el('td', {class: numeric && numeric[i] ? 'num' : null,
                       text: String(c)});
    })));
    return el('table', null, [el('thead', null, [head]),
                              el('tbody', null, body)]);
  }

  // --- Prometheus text -----------------------------------------------
  function parseLabels(text) {
    const labels = {};
    const re = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;
    let m;
    while ((m = re.exec(text)) !== null) {
      labels[m[1]] = m[2].replace(/\\n/g, '\n').replace(/\\"/g, '"')
                         .replace(/\\\\/g, '\\');
    }
    return labels;
  }
  function parseMetrics(text) {
    const samples = [];
    for (const line of text.split('\n')) {
      if (line === '' || line[0] === '#') continue;
      const brace = line.indexOf('{');
      const space = line.lastIndexOf(' ');
      if (space < 0) continue;
      const name = brace >= 0 ? line.slice(0, brace) : line.slice(0, space);
      const labels = brace >= 0 ? parseLabels(line.slice(brace, space)) : {};
      samples.push({name, labels, value: Number(line.slice(space + 1))});
    }
    return samples;
  }
  function sum(samples, name, match) {
    let total = 0;
    for (const s of samples) {
      if (s.name !== name) continue;
      let ok = true;
      for (const [k, v] of Object.entries(match)) {
        if (s.labels[k] !== v) { ok = false; break; }
      }
      if (ok) total += s.value;
    }
    return total;
  }
  // Latency buckets of one route: [{le, count}] cumulative, sorted.
  function buckets(samples, authority, route) {
    const out = [];
    for (const s of samples) {
      if (s.name !== 'route_response_latency_ms_bucket') continue;
      if (s.labels.authority !== authority || s.labels.route !== route) continue;
      out.push({le: s.labels.le === '+Inf' ? Infinity : Number(s.labels.le),
                count: s.value});
    }
    return out.sort((a, b) => a.le - b.le);
  }
  function quantile(bs, q) {
    if (bs.length === 0) return null;
    const total = bs[bs.length - 1].count;
    if (total === 0) return null;
    const want = q * total;
    let prevLe = 0, prevCount = 0;
    for (const b of bs) {
      if (b.count >= want) {
        if (!Number.isFinite(b.le)) return prevLe;
        const span = b.count - prevCount;
        return span > 0 ? prevLe + (b.le - prevLe) * (want - prevCount) / span
                        : b.le;
      }
      prevLe = b.le; prevCount = b.count;
    }
    return prevLe;
  }

  // --- state kept between polls (bounded) ----------------------------
  const history = new Map();  // authority -> [{t, total}]
  const lastPicks = new Map();  // "target|address" -> picks
  const latencyPlots = new Map();  // "authority|route" -> canvas (reused)

  function rememberTotal(authority, t, total) {
    let h = history.get(authority);
    if (!h) { h = []; history.set(authority, h); }
    h.push({t, total});
    while (h.length > HISTORY + 1) h.shift();
  }
  function rates(h) {
    const out = [];
    for (let i = 1; i < h.length; i++) {
      const dt = (h[i].t - h[i - 1].t) / 1000;
      out.push(dt > 0 ? Math.max(0, h[i].total - h[i - 1].total) / dt : 0);
    }
    return out;
  }

  // --- plots ---------------------------------------------------------
  function cssVar(name) {
    return getComputedStyle(document.documentElement).getPropertyValue(name)
        .trim();
  }
  function drawRates() {
    const canvas = document.getElementById('rate');
    const ctx = canvas.getContext('2d');
    const w = canvas.width, h = canvas.height, pad = 28;
    ctx.clearRect(0, 0, w, h);
    const series = [...history.entries()].map(([a, hist]) => [a, rates(hist)]);
    let max = 1;
    for (const [, r] of series) for (const v of r) max = Math.max(max, v);
    ctx.strokeStyle = cssVar('--line');
    ctx.fillStyle = cssVar('--muted');
    ctx.font = '11px system-ui, sans-serif';
    ctx.beginPath(); ctx.moveTo(pad, 4); ctx.lineTo(pad, h - pad + 4);
    ctx.lineTo(w - 4, h - pad + 4); ctx.stroke();
    ctx.fillText(fmt(max, max < 10 ? 1 : 0) + '/s', 2, 12);
    ctx.fillText('now', w - 26, h - 8);
    ctx.fillText('-5 min', pad, h - 8);
    const legend = document.getElementById('rate-legend');
    legend.replaceChildren();
    series.forEach(([authority, r], i) => {
      const color = COLORS[i % COLORS.length];
      ctx.strokeStyle = color; ctx.lineWidth = 2; ctx.beginPath();
      r.forEach((v, j) => {
        const x = pad + (w - pad - 6) * (HISTORY - r.length + j) / (HISTORY - 1);
        const y = (h - pad) - (h - pad - 8) * v / max + 4;
        if (j === 0) ctx.moveTo(x, y); else ctx.lineTo(x, y);
      });
      ctx.stroke(); ctx.lineWidth = 1;
      const last = r.length ? r[r.length - 1] : 0;
      legend.append(el('li', null, [el('span', {style: {background: color}}),
                                    authority + ' ' + fmt(last) + '/s']));
    });
  }
  function drawLatency(canvas, bs) {
    const ctx = canvas.getContext('2d');
    const w = canvas.width, h = canvas.height, pad = 16;
    ctx.clearRect(0, 0, w, h);
    const bars = [];
    let prev = 0;
    for (const b of bs) { bars.push({le: b.le, n: b.count - prev}); prev = b.count; }
    // Up to the last bucket with a sample (the rest would be empty).
    while (bars.length > 1 && bars[bars.length - 1].n === 0) bars.pop();
    const max = Math.max(1, ...bars.map(b => b.n));
    const bw = (w - 8) / Math.max(1, bars.length);
    ctx.fillStyle = cssVar('--accent');
    bars.forEach((b, i) => {
      const bh = (h - pad - 4) * b.n / max;
      ctx.fillRect(4 + i * bw + 1, h - pad - bh, Math.max(1, bw - 2), bh);
    });
    ctx.fillStyle = cssVar('--muted');
    ctx.font = '10px system-ui, sans-serif';
    const top = bars.length ? bars[bars.length - 1].le : 0;
    ctx.fillText('0 ms', 4, h - 3);
    const right = Number.isFinite(top) ? top + ' ms' : 'more';
    ctx.fillText(right, w - 6 - ctx.measureText(right).width, h - 3);
  }

  // --- one destination -----------------------------------------------
  function endpointRows(d) {
    let totalDelta = 0;
    const rows = (d.endpoints || []).map(e => {
      const loads = e.load_per_channel || [];
      const picks = loads.reduce((a, l) => a + (l.picks || 0), 0);
      const failures = loads.reduce((a, l) => a + (l.failures || 0), 0);
      const pending = loads.reduce((a, l) => a + (l.pending || 0), 0);
      // The estimate of the channel that sends it the most calls: a channel
      // that sends it none (a split's idle backend) still holds its start
      // value, which says nothing of the endpoint.
      const busiest = loads.reduce((a, l) => (a === null || (l.picks || 0) > (a.picks || 0)) ? l : a, null);
      const rtt = busiest ? busiest.rtt_estimate_ms || 0 : 0;
      const ejectedBy = loads.find(l => l.ejected);
      const ejected = ejectedBy !== undefined;
      const key = d.target + '|' + e.address;
      const before = lastPicks.has(key) ? lastPicks.get(key) : picks;
      lastPicks.set(key, picks);
      const delta = Math.max(0, picks - before);
      totalDelta += delta;
      return {e, picks, failures, pending, rtt, ejected, ejectedBy, delta};
    });
    return rows.map(r => {
      const conn = r.e.connection || {};
      const share = totalDelta > 0 ? r.delta / totalDelta : 0;
      const load = el('span', null, [
        el('span', {class: 'bar', style: {width: Math.round(share * 80) + 'px'}}),
        ' ' + pct(totalDelta > 0 ? share : null)]);
      const why = {consecutive_failures: 'failures in a row',
                   success_rate: 'success rate below its peers',
                   failure_percentage: 'failure percentage'};
      const state = r.ejected
          ? el('span', {class: 'bad', text: 'ejected (' +
                fmt(r.ejectedBy.ejection_left_ms / 1000) + ' s left; ' +
                (why[r.ejectedBy.ejection_reason] || 'reason unknown') + ')'})
          : el('span', {class: conn.state === 'READY' ? 'good' : 'muted',
                        text: conn.state || 'idle'});
      const success = r.picks > 0 ? 1 - r.failures / r.picks : null;
      return [r.e.address, r.e.weight, state, fmt(r.rtt), r.pending, r.picks,
              pct(success), load,
              r.e.tls_identity ? r.e.tls_identity + ' (' + (conn.tls || '') + ')'
                               : (conn.tls ? 'plaintext: ' + (conn.no_tls_reason || conn.tls) : '')];
    });
  }
  function routeSection(d, samples) {
    const routes = new Set();
    for (const s of samples) {
      if (s.name === 'route_request_total' && s.labels.authority === d.target) {
        routes.add(s.labels.route);
      }
    }
    if (routes.size === 0) return [el('p', {class: 'muted', text: 'No request yet.'})];
    const rows = [], plots = [];
    for (const route of [...routes].sort()) {
      const m = {authority: d.target, route};
      const requests = sum(samples, 'route_request_total', m);
      const responses = sum(samples, 'route_response_total', m);
      const ok = sum(samples, 'route_response_total',
                     Object.assign({classification: 'success'}, m));
      const bs = buckets(samples, d.target, route);
      rows.push([route, requests, pct(responses > 0 ? ok / responses : null),
                 fmt(quantile(bs, 0.5), 2), fmt(quantile(bs, 0.99), 2),
                 sum(samples, 'route_retry_total', m),
                 sum(samples, 'route_hedge_total', m),
                 sum(samples, 'route_retry_skipped_total',
                     Object.assign({reason: 'budget'}, m)) +
                     sum(samples, 'route_hedge_skipped_total', m),
                 sum(samples, 'route_timeout_total', m)]);
      const key = d.target + '|' + route;
      let canvas = latencyPlots.get(key);
      if (!canvas) {
        canvas = el('canvas', {width: 320, height: 90, class: 'small', role: 'img',
                               'aria-label': 'latency histogram of route ' + route});
        latencyPlots.set(key, canvas);
      }
      drawLatency(canvas, bs);
      plots.push(el('figure', null, [canvas,
          el('figcaption', {text: route + ': latency histogram'})]));
    }
    return [table(['route', 'requests', 'success', 'p50 ms', 'p99 ms', 'retries',
                   'hedges', 'refused by budget', 'timeouts'], rows,
                  [false, true, true, true, true, true, true, true, true]),
            el('div', {class: 'plots'}, plots)];
  }
  function configSection(d) {
    const c = d.service_config;
    if (!c) return [el('p', {class: 'muted', text: 'No service config: one default route.'})];
    const out = [];
    const routes = c.routes || [];
    if (routes.length) {
      out.push(table(['route', 'timeout ms', 'retryable', 'conditions'],
          routes.map(r => [r.name || '[unnamed]', r.timeout_ms === undefined ? '' : r.timeout_ms,
                           r.is_retryable ? 'yes' : 'no',
                           JSON.stringify(r.condition || r.all || r.any || '')
                               .slice(0, 160)])));
    }
    if (c.retry_budget) {
      out.push(el('p', {text: 'Retry budget: ratio ' + c.retry_budget.retry_ratio +
          ', at least ' + c.retry_budget.min_retries_per_second + '/s, window ' +
          c.retry_budget.ttl_ms + ' ms'}));
    }
    const backends = c.backends || [];
    if (backends.length) {
      const total = backends.reduce((a, b) => a + (b.weight || 0), 0);
      out.push(el('h4', {text: 'Traffic split'}));
      out.push(table(['backend', 'weight', 'share'], backends.map(b =>
          [b.authority || (b.cluster ? 'cluster ' + b.cluster : ''), b.weight,
           pct(total > 0 ? (b.weight || 0) / total : null)]),
          [false, true, true]));
    }
    return out.length ? out : [el('pre', {text: JSON.stringify(c, null, 1).slice(0, 2000)})];
  }
  function streamText(name, s) {
    if (!s) return null;
    const state = s.connected ? 'connected' : (s.streams_started ? 'not connected' : 'none');
    const text = name + ': ' + state + ', ' + s.streams_started + ' stream(s), ' +
        s.messages + ' message(s)';
    return el('li', {class: s.last_error ? 'warn' : null,
                     text: s.last_error ? text + '; last error: ' + s.last_error : text});
  }
  function resourcesSection(d) {
    // The resources each stream asked for (xDS), once each.
    const seen = new Map();
    for (const s of [d.endpoint_stream, d.config_stream]) {
      for (const r of (s && s.resources) || []) seen.set(r.type + '|' + r.name, r);
    }
    if (seen.size === 0) return [];
    return [el('h4', {text: 'xDS resources'}),
            table(['type', 'name', 'version', 'state', 'updated', 'last rejection'],
                  [...seen.values()].map(r => [
                      r.type || '', r.name || '', r.version || '',
                      el('span', {class: r.state === 'NACKED' ? 'bad'
                                       : r.state === 'ACKED' ? 'good' : 'warn',
                                  text: r.state || ''}),
                      r.updated || '', r.error || ''])) ];
  }
  function destinationCard(d, samples) {
    // A split's calls go to its backends: it needs no endpoints of its own.
    const split = ((d.service_config && d.service_config.backends) || []).length;
    const state = split && !(d.endpoints || []).length
        ? el('span', {class: 'good', text: 'traffic split over ' + split + ' backend(s)'})
        : !d.answered ? el('span', {class: 'warn', text: 'waiting for discovery'})
        : !d.exists ? el('span', {class: 'bad', text: 'does not exist'})
        : el('span', {class: 'good', text: (d.endpoints || []).length + ' endpoint(s)'});
    const errors = [d.last_error && ('discovery: ' + d.last_error),
                    d.last_config_error && ('config: ' + d.last_config_error)]
        .filter(Boolean).map(t => el('li', {class: 'bad', text: t}));
    const fromCode = (d.answered || split) && d.endpoint_stream && d.config_stream &&
        !d.endpoint_stream.streams_started && !d.config_stream.streams_started;
    const streams = fromCode
        ? [el('li', {text: 'endpoints and config given in code (no discovery stream)'})]
        : [streamText('endpoint stream', d.endpoint_stream),
           streamText('config stream', d.config_stream)].filter(Boolean);
    return el('article', {class: 'card', 'aria-label': 'destination ' + d.target}, [
      el('div', {class: 'card-head'}, [el('h3', {text: d.target}), state,
          el('span', {class: 'badge', text: 'source: ' + (d.source || '?')}),
          el('span', {class: 'badge', text: d.channels + ' channel(s)'})]),
      el('ul', {class: 'muted'}, streams.concat(errors)),
      el('h4', {text: 'Endpoints'}),
      table(['endpoint', 'weight', 'state', 'latency ms', 'pending', 'picks',
             'success', 'load now', 'TLS'], endpointRows(d),
            [false, true, false, true, true, true, true, false, false]),
      el('h4', {text: 'Routes'}),
      ...routeSection(d, samples),
      d.retry_budget_available === null || d.retry_budget_available === undefined
          ? null
          : el('p', {class: d.retry_budget_available > 0 ? null : 'bad',
                     text: 'Retry budget now: ' + d.retry_budget_available +
                           ' retries available (shared by the routes)'}),
      el('h4', {text: 'Service config'}),
      ...configSection(d),
      ...resourcesSection(d)]);
  }

  // --- polling -------------------------------------------------------
  async function poll() {
    const status = document.getElementById('status');
    try {
      const [dr, mr] = await Promise.all([fetch('/describe', {cache: 'no-store'}),
                                          fetch('/metrics', {cache: 'no-store'})]);
      if (!dr.ok || !mr.ok) throw new Error('HTTP ' + dr.status + '/' + mr.status);
      const destinations = await dr.json();
      const samples = parseMetrics(await mr.text());
      const now = Date.now();
      const box = document.getElementById('destinations');
      const cards = destinations.map(d => {
        rememberTotal(d.target, now, sum(samples, 'route_request_total', {authority: d.target}));
        return destinationCard(d, samples);
      });
      for (const key of [...history.keys()]) {
        if (!destinations.some(d => d.target === key)) history.delete(key);
      }
      box.replaceChildren(...(cards.length ? cards
          : [el('p', {class: 'muted', text: 'No destination called yet.'})]));
      drawRates();
      status.className = 'good';
      status.textContent = 'updated ' + new Date(now).toLocaleTimeString();
    } catch (err) {
      status.className = 'bad';
      status.textContent = 'cannot read the mesh: ' + err.message;
    }
    setTimeout(poll, POLL_MS);
  }

  // --- live tap ------------------------------------------------------
  let source = null;
  const rows = new Map();  // id -> row cells
  function tapUrl() {
    const q = new URLSearchParams();
    const path = document.getElementById('tap-path').value.trim();
    const authority = document.getElementById('tap-authority').value.trim();
    const method = document.getElementById('tap-method').value.trim();
    if (path) q.set('path_prefix', path);
    if (authority) q.set('authority', authority);
    if (method) q.set('method', method.toUpperCase());
    q.set('limit', '1000');
    return '/tap?' + q.toString();
  }
  function setTapState(text, cls) {
    const s = document.getElementById('tap-state');
    s.textContent = text;
    s.className = cls || 'muted';
  }
  function onTapEvent(e) {
    const ev = JSON.parse(e.data);
    const body = document.getElementById('tap-rows');
    if (ev.kind === 'request') {
      const cells = {};
      const tr = el('tr', null, ['time', 'method', 'authority', 'path', 'destination',
                                 'route', 'status', 'latency', 'bytes'].map(k => {
        const td = el('td', {class: k === 'latency' || k === 'bytes' ? 'num'
                                    : k === 'path' ? 'path' : null});
        cells[k] = td;
        return td;
      }));
      cells.time.textContent = new Date().toLocaleTimeString();
      cells.method.textContent = ev.method;
      cells.authority.textContent = ev.authority;
      cells.path.textContent = ev.path;
      cells.destination.textContent = ev.destination;
      // A retry or hedge says so beside its route.
      const again = ev.attempt > 1
          ? ' (' + (ev.hedge ? 'hedge' : 'retry') + ', attempt ' + ev.attempt + ')' : '';
      cells.route.textContent = (ev.route || '') + again;
      tr.dataset.id = ev.id;
      rows.set(ev.id, cells);
      body.prepend(tr);
      while (body.children.length > TAP_ROWS) {
        const old = body.lastElementChild;
        rows.delete(old.dataset.id);
        old.remove();
      }
    } else {
      const cells = rows.get(ev.id);
      if (!cells) return;
      if (ev.kind === 'response') {
        cells.status.textContent = String(ev.status || '');
        cells.latency.textContent = fmt(ev.since_request_ms, 2);
      } else if (ev.kind === 'end') {
        cells.bytes.textContent = String(ev.bytes);
        if (ev.grpc_status !== undefined) {
          cells.status.textContent += (cells.status.textContent ? ' ' : '') +
              'grpc ' + ev.grpc_status;
        }
        if (ev.reset !== undefined) {
          cells.status.textContent += ' reset ' + ev.reset;
          cells.status.className = 'bad';
        }
        rows.delete(ev.id);
      }
    }
  }
  function startTap() {
    stopTap();
    const url = tapUrl();
    source = new EventSource(url);
    setTapState('connecting\u2026');
    source.addEventListener('ready', () => setTapState(
        'watching ' + decodeURIComponent(url.slice(5)).replace(/&/g, ', '), 'good'));
    source.addEventListener('message', onTapEvent);
    source.addEventListener('dropped', e => setTapState(
        'some events were dropped (' + JSON.parse(e.data).dropped + ')', 'warn'));
    source.addEventListener('done', () => { if (source) startTap(); });
    source.addEventListener('error', async () => {
      if (!source || source.readyState !== EventSource.CLOSED) return;
      // Refused: say why, in the server's words.
      try {
        const r = await fetch(url);
        setTapState(r.ok ? 'the stream ended' : await r.text(), 'bad');
      } catch (err) {
        setTapState('cannot reach the mesh: ' + err.message, 'bad');
      }
      stopTap(true);
    });
    document.getElementById('tap-start').disabled = true;
    document.getElementById('tap-stop').disabled = false;
  }
  function stopTap(keepState) {
    if (source) { source.close(); source = null; }
    document.getElementById('tap-start').disabled = false;
    document.getElementById('tap-stop').disabled = true;
    if (!keepState) setTapState('');
  }
  document.getElementById('tap-form').addEventListener('submit', e => {
    e.preventDefault();
    startTap();
  });
  document.getElementById('tap-stop').addEventListener('click', () => stopTap());
  poll();
})();
)js";

}  // namespace mesh::internal
