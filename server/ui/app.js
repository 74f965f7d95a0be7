/* Aquifer's built-in dashboard: pools, volumes and nodes from the API, and
 * charts of delivered throughput from the /metrics routes against each
 * limit (a pool's throughput budget, a volume's limit, a node's ceiling),
 * polled every 5 s. "Delivered" is the last finished 10 s slot; figures are
 * rounded to two decimals. DOWN nodes and volumes no node serves are marked;
 * a volume whose stateDetails say something else (it is moving) shows it
 * next to its state. The token comes from the URL fragment (#token=...) or
 * the sign-in box and stays in sessionStorage. */
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
/* A figure for people: at most two decimals (127.88, not 127.876953125). */
function r2(n) {
  n = Number(n);
  return n === null || isNaN(n) ? '–' : Math.round(n * 100) / 100;
}

/* Delivered MiB/s of each finished point: (read + write bytes) over the
 * step. The slot still filling (aquiferd marks it partial, by its own clock,
 * which the browser's may not match) is left out: it holds only part of its
 * bytes and would show a dip that never happened. */
function series(m) {
  const step = m.stepSeconds || 10;
  return (m.points || []).filter(p => !p.partial).map(p => ({
    t: Date.parse(p.time),
    mibps: (Number(p.readBytes) + Number(p.writeBytes)) / MIB / step,
    limit: Number(p.throughputLimitMibps || 0),
    p99: p.latencyP99Ms,
  }));
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

/* An inline SVG line chart: throughput polyline, dashed line at lim (the
 * pool's budget, the volume's limit, the node's ceiling). */
function chart(kind, name, title, s, limitNow) {
  const W = 360, H = 140, L = 44, R = 8, T = 10, B = 20;
  const now = Date.now(), span = 15 * 60 * 1000, t0 = now - span;
  const lim = limitNow || (latest(s) ? latest(s).limit : 0);
  const max = Math.max(1, lim, ...s.map(p => p.mibps)) * 1.1;
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
  if (lim > 0)
    svg.appendChild(el('line', { class: 'limit', x1: L, y1: y(lim), x2: W - R, y2: y(lim), 'data-limit': lim }));
  const pts = s.map(p => x(p.t).toFixed(1) + ',' + y(p.mibps).toFixed(1)).join(' ');
  svg.appendChild(el('polyline', { class: 'tput', points: pts || `${L},${H - B}`, 'data-points': s.length }));
  const fig = document.createElement('figure');
  fig.appendChild(svg);
  const cap = document.createElement('figcaption');
  const last = latest(s);
  cap.textContent = `${title}: ${r2(last ? last.mibps : 0)} MiB/s of ${r2(lim)} MiB/s`;
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

/* Whether a volume is served: not when aquiferd's stateDetails say no node
 * serves it, nor when its mount address is a DOWN node's (nodes is null for a
 * token that cannot list them). Only READY and UPDATING volumes are judged. */
function served(v, nodes) {
  if (v.state !== 'READY' && v.state !== 'UPDATING') return true;
  if (/no node serves|not served/.test(v.stateDetails || '')) return false;
  const mo = (v.mountOptions || [])[0];
  if (!mo || !nodes) return true;
  const at = mo.ipAddress + ':' + mo.port;
  return !nodes.some(n => n.state === 'DOWN' && n.nfsAddress === at);
}

/* A volume's state with what stateDetails say; one no node serves is marked. */
function stateCell(v, isServed) {
  const text = (v.state || '') + (v.stateDetails ? ': ' + v.stateDetails : '');
  if (!isServed) return { text: '⚠ not served · ' + text, cls: 'alert' };
  return v.stateDetails ? { text, cls: 'warn' } : (v.state || '');
}

/* A node's state; DOWN is marked (it does not report: its volumes move). */
function nodeStateCell(n) {
  const text = (n.state || '') + (n.stateDetails ? ': ' + n.stateDetails : '');
  if (n.state === 'DOWN') return { text: '⚠ ' + text, cls: 'alert' };
  return n.stateDetails ? { text, cls: 'warn' } : (n.state || '');
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
    const budget = Number(p.totalThroughputMibps || 0);
    row(pb, [base(p.name), seg(p.name, 'locations'), p.serviceLevel || '', fmtBytes(Number(p.capacityGib) * 1073741824),
      Number(p.volumeCount || 0), r2(budget), r2(p.availableThroughputMibps || 0), r2(last ? last.mibps : 0), p.state || ''],
      { 'data-pool': p.name, 'data-delivered-slot': slotOf(last) });
    pc.appendChild(chart('pool', p.name, 'pool ' + base(p.name), s, budget));
  }
  for (const v of vols) {
    const s = volSeries[v.name] || [], last = latest(s);
    const ok = served(v, nodes);
    row(vb, [base(v.name), base(v.storagePool), fmtBytes(Number(v.capacityGib) * 1073741824),
      fmtBytes(Number(v.usedGib || 0) * 1073741824), r2(v.throughputMibps || 0),
      r2(last ? last.mibps : 0), last && last.p99 !== null ? r2(last.p99) : '–', stateCell(v, ok)],
      { 'data-volume': v.name, 'data-delivered-slot': slotOf(last), 'data-state-details': v.stateDetails || '',
        'data-served': String(ok), class: ok ? '' : 'unserved' });
    vc.appendChild(chart('volume', v.name, 'volume ' + base(v.name), s, Number(v.throughputMibps || 0)));
  }
  $('nodes-section').hidden = !nodes;
  for (const n of nodes || []) {
    const s = nodeSeries[n.name] || [], last = latest(s);
    row(nb, [base(n.name), n.location || '', nodeStateCell(n), Number(n.volumeCount || 0),
      `${r2(n.allocatedThroughputMibps)} / ${r2(n.throughputCeilingMibps)}`, r2(last ? last.mibps : 0)],
      { 'data-node': n.name, 'data-delivered-slot': slotOf(last), 'data-state': n.state || '',
        class: n.state === 'DOWN' ? 'down' : '' });
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
  module.exports = { series, latest, r2, served };
}
