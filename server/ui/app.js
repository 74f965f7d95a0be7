/* Aquifer's built-in dashboard: pools, volumes and nodes from the API, and
 * charts of delivered throughput against each limit from the /metrics
 * routes, polled every 5 s. "Delivered" is the last finished 10 s slot; a
 * volume whose stateDetails say something (no node serves it, it is moving)
 * shows it next to its state. The token comes from the URL fragment
 * (#token=...) or the sign-in box and stays in sessionStorage. */
'use strict';

const POLL_MS = 5000;
const WINDOW = '15m';
const MIB = 1048576;
let token = '';

function $(id) { return document.getElementById(id); }

function takeToken() {
  const m = /(?:^#|&)token=([^&]+)/.exec(location.hash);
  if (m) {
    token = decodeURIComponent(m[1]);
    sessionStorage.setItem('aquiferToken', token);
    history.replaceState(null, '', location.pathname);
  } else {
    token = sessionStorage.getItem('aquiferToken') || '';
  }
}

async function api(path) {
  const r = await fetch(path, { headers: { Authorization: 'Bearer ' + token } });
  if (!r.ok) {
    const err = new Error(path + ': HTTP ' + r.status);
    err.status = r.status;
    throw err;
  }
  return r.json();
}

async function listAll(path, key) {
  let out = [], pageToken = '';
  for (let i = 0; i < 50; i++) {
    const sep = path.includes('?') ? '&' : '?';
    const page = await api(path + sep + 'pageSize=100' + (pageToken ? '&pageToken=' + encodeURIComponent(pageToken) : ''));
    out = out.concat(page[key] || []);
    pageToken = page.nextPageToken || '';
    if (!pageToken) break;
  }
  return out;
}

function base(name) { return String(name || '').split('/').pop(); }
function seg(name, key) {
  const parts = String(name || '').split('/');
  const i = parts.indexOf(key);
  return i >= 0 ? parts[i + 1] : '';
}
function fmtBytes(n) {
  n = Number(n || 0);
  const u = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
  let i = 0;
  while (n >= 1024 && i < u.length - 1) { n /= 1024; i++; }
  return (i ? n.toFixed(1) : n) + ' ' + u[i];
}
function fmt(n, d) { return n === null || n === undefined || isNaN(n) ? '–' : Number(n).toFixed(d === undefined ? 1 : d); }

/* Delivered MiB/s of each finished point: (read + write bytes) over the
 * step. The slot still filling (its end is in the future) is left out: it
 * holds only part of its bytes and would show a dip that never happened. */
function series(m) {
  const step = m.stepSeconds || 10, now = Date.now();
  return (m.points || []).map(p => ({
    t: Date.parse(p.time),
    mibps: (Number(p.readBytes) + Number(p.writeBytes)) / MIB / step,
    limit: Number(p.throughputLimitMibps || 0),
    p99: p.latencyP99Ms,
  })).filter(p => p.t + step * 1000 <= now);
}
function latest(s) { return s.length ? s[s.length - 1] : null; }
function slotOf(p) { return p ? new Date(p.t).toISOString() : ''; }

const SVGNS = 'http://www.w3.org/2000/svg';
function el(tag, attrs, text) {
  const e = document.createElementNS(SVGNS, tag);
  for (const k in attrs) e.setAttribute(k, attrs[k]);
  if (text !== undefined) e.textContent = text;
  return e;
}

/* An inline SVG line chart: throughput polyline, dashed limit line. */
function chart(kind, name, title, s, limitNow) {
  const W = 360, H = 140, L = 44, R = 8, T = 10, B = 20;
  const now = Date.now(), span = 15 * 60 * 1000, t0 = now - span;
  const max = Math.max(1, limitNow || 0, ...s.map(p => p.mibps), ...s.map(p => p.limit)) * 1.1;
  const x = t => L + (W - L - R) * Math.min(1, Math.max(0, (t - t0) / span));
  const y = v => T + (H - T - B) * (1 - v / max);
  const svg = el('svg', { class: 'chart', width: W, height: H, viewBox: `0 0 ${W} ${H}`, role: 'img',
    'data-kind': kind, 'data-name': name, 'aria-label': title + ' throughput' });
  svg.appendChild(el('line', { class: 'axis', x1: L, y1: H - B, x2: W - R, y2: H - B }));
  svg.appendChild(el('line', { class: 'axis', x1: L, y1: T, x2: L, y2: H - B }));
  svg.appendChild(el('text', { x: 2, y: T + 8 }, max.toFixed(0)));
  svg.appendChild(el('text', { x: 2, y: H - B }, '0'));
  svg.appendChild(el('text', { x: L, y: H - 4 }, '-15 min'));
  svg.appendChild(el('text', { x: W - R - 20, y: H - 4 }, 'now'));
  svg.appendChild(el('text', { x: W / 2 - 20, y: H - 4 }, 'MiB/s'));
  const lim = limitNow || (latest(s) ? latest(s).limit : 0);
  if (lim > 0)
    svg.appendChild(el('line', { class: 'limit', x1: L, y1: y(lim), x2: W - R, y2: y(lim), 'data-limit': lim }));
  const pts = s.map(p => x(p.t).toFixed(1) + ',' + y(p.mibps).toFixed(1)).join(' ');
  svg.appendChild(el('polyline', { class: 'tput', points: pts || `${L},${H - B}`, 'data-points': s.length }));
  const fig = document.createElement('figure');
  fig.appendChild(svg);
  const cap = document.createElement('figcaption');
  const last = latest(s);
  cap.textContent = `${title}: ${fmt(last ? last.mibps : 0)} MiB/s of ${fmt(lim)} MiB/s`;
  fig.appendChild(cap);
  return fig;
}

function row(tbody, cells, attrs) {
  const tr = document.createElement('tr');
  for (const k in attrs || {}) tr.setAttribute(k, attrs[k]);
  for (const c of cells) {
    const td = document.createElement('td');
    if (typeof c === 'number') td.className = 'num';
    if (c && typeof c === 'object') {
      td.className = c.cls || '';
      td.textContent = c.text;
    } else {
      td.textContent = c;
    }
    tr.appendChild(td);
  }
  tbody.appendChild(tr);
}

/* A volume's state with what stateDetails says (e.g. that no node serves it). */
function stateCell(v) {
  return v.stateDetails ? { text: (v.state || '') + ': ' + v.stateDetails, cls: 'warn' } : (v.state || '');
}

async function metricsOf(path) {
  try { return series(await api(path + '/metrics?window=' + WINDOW)); } catch (e) { return []; }
}

async function refresh() {
  const projects = await listAll('/v1/projects', 'projects');
  let pools = [], vols = [];
  for (const p of projects) {
    const pid = base(p.name);
    pools = pools.concat(await listAll(`/v1/projects/${pid}/locations/-/storagePools`, 'storagePools'));
    vols = vols.concat(await listAll(`/v1/projects/${pid}/locations/-/volumes`, 'volumes'));
  }
  let nodes = null;
  try { nodes = await listAll('/v1/nodes', 'nodes'); } catch (e) { if (e.status !== 403) throw e; }

  const volSeries = {}, poolSeries = {}, nodeSeries = {};
  await Promise.all(vols.map(async v => { volSeries[v.name] = await metricsOf('/v1/' + v.name); }));
  await Promise.all(pools.map(async p => { poolSeries[p.name] = await metricsOf('/v1/' + p.name); }));
  if (nodes) await Promise.all(nodes.map(async n => { nodeSeries[n.name] = await metricsOf('/v1/' + n.name); }));

  const pb = $('pools').tBodies[0], vb = $('volumes').tBodies[0], nb = $('nodes').tBodies[0];
  pb.textContent = vb.textContent = nb.textContent = '';
  const pc = $('pool-charts'), vc = $('volume-charts'), nc = $('node-charts');
  pc.textContent = vc.textContent = nc.textContent = '';
  for (const p of pools) {
    const s = poolSeries[p.name] || [], last = latest(s);
    row(pb, [base(p.name), seg(p.name, 'locations'), p.serviceLevel || '', fmtBytes(Number(p.capacityGib) * 1073741824),
      Number(p.volumeCount || 0), Number(p.availableThroughputMibps || 0), Number(fmt(last ? last.mibps : 0)), p.state || ''],
      { 'data-pool': p.name, 'data-delivered-slot': slotOf(last) });
    pc.appendChild(chart('pool', p.name, 'pool ' + base(p.name), s, last ? last.limit : 0));
  }
  for (const v of vols) {
    const s = volSeries[v.name] || [], last = latest(s);
    row(vb, [base(v.name), base(v.storagePool), fmtBytes(Number(v.capacityGib) * 1073741824),
      fmtBytes(Number(v.usedGib || 0) * 1073741824), Number(v.throughputMibps || 0),
      Number(fmt(last ? last.mibps : 0)), last && last.p99 !== null ? Number(fmt(last.p99, 2)) : '–', stateCell(v)],
      { 'data-volume': v.name, 'data-delivered-slot': slotOf(last), 'data-state-details': v.stateDetails || '' });
    vc.appendChild(chart('volume', v.name, 'volume ' + base(v.name), s, Number(v.throughputMibps || 0)));
  }
  $('nodes-section').hidden = !nodes;
  for (const n of nodes || []) {
    const s = nodeSeries[n.name] || [], last = latest(s);
    row(nb, [base(n.name), n.location || '', n.state || '', Number(n.volumeCount || 0),
      `${fmt(n.allocatedThroughputMibps, 0)} / ${fmt(n.throughputCeilingMibps, 0)}`, Number(fmt(last ? last.mibps : 0))],
      { 'data-node': n.name, 'data-delivered-slot': slotOf(last) });
    nc.appendChild(chart('node', n.name, 'node ' + base(n.name), s, Number(n.throughputCeilingMibps || 0)));
  }
  $('status').textContent = `${pools.length} pools, ${vols.length} volumes` +
    (nodes ? `, ${nodes.length} nodes` : '') + ' · updated ' + new Date().toLocaleTimeString();
  $('status').className = '';
  $('status').setAttribute('data-updated', new Date().toISOString());
}

async function tick() {
  if (!token) return;
  try {
    await refresh();
  } catch (e) {
    $('status').textContent = String(e.message || e);
    $('status').className = 'err';
    if (e.status === 401) signOut();
  }
}

function showLogin(show) {
  $('login').hidden = !show;
  $('logout').hidden = show;
}

function signOut() {
  token = '';
  sessionStorage.removeItem('aquiferToken');
  showLogin(true);
}

/* In a page: sign in and poll. Loaded by node (tests/e2e/test_metrics.sh
 * checks series() there), it only exports its pure functions. */
if (typeof document !== 'undefined') {
  $('login').addEventListener('submit', ev => {
    ev.preventDefault();
    token = $('token').value.trim();
    sessionStorage.setItem('aquiferToken', token);
    showLogin(!token);
    tick();
  });
  $('logout').addEventListener('click', () => { signOut(); $('status').textContent = 'signed out'; });

  takeToken();
  showLogin(!token);
  tick();
  setInterval(tick, POLL_MS);
} else if (typeof module !== 'undefined') {
  module.exports = { series, latest };
}
