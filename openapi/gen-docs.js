#!/usr/bin/env node
// openapi/gen-docs.js: render openapi.yaml as one standalone HTML page
// (docs.html) that aquiferd serves at GET /docs/. No scripts, no fonts, no
// network: `redocly build-docs` output loads its renderer from a CDN, so this
// small static renderer is used instead.
//
//   node openapi/gen-docs.js [SPEC [OUT]]    (defaults: openapi.yaml docs.html beside this script)
//
// The page records the SHA-256 of the spec it was made from in
// <meta name="aquifer-spec-sha256">; tests/e2e/test_openapi.sh regenerates
// it and compares.
'use strict';
const fs = require('fs');
const path = require('path');
const crypto = require('crypto');
const yaml = require('js-yaml');

const specPath = process.argv[2] || path.join(__dirname, 'openapi.yaml');
const outPath = process.argv[3] || path.join(__dirname, 'docs.html');
const text = fs.readFileSync(specPath, 'utf8');
const spec = yaml.load(text);
const sha = crypto.createHash('sha256').update(text).digest('hex');

const esc = (s) => String(s === undefined || s === null ? '' : s)
  .replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
// Inline `code` spans in descriptions; everything else is escaped text.
const md = (s) => esc(s || '').replace(/`([^`]+)`/g, '<code>$1</code>').replace(/\n\n/g, '</p><p>');
const anchor = (s) => String(s).replace(/[^A-Za-z0-9_-]/g, '-');

function resolve(obj) {
  if (obj && obj.$ref) {
    const parts = obj.$ref.replace(/^#\//, '').split('/');
    let o = spec;
    for (const p of parts) o = o[p];
    return o;
  }
  return obj;
}

function typeOf(s) {
  if (!s) return '';
  if (s.$ref) {
    const n = s.$ref.split('/').pop();
    return `<a href="#schema-${anchor(n)}">${esc(n)}</a>`;
  }
  if (s.allOf && s.allOf.length === 1) return typeOf(s.allOf[0]);
  if (s.oneOf) return 'one of ' + s.oneOf.map(typeOf).join(' | ');
  if (s.type === 'array') return `array of ${typeOf(s.items)}`;
  if (s.type === 'object' && s.additionalProperties && typeof s.additionalProperties === 'object')
    return `map of string to ${typeOf(s.additionalProperties)}`;
  let t = esc(s.type || 'any');
  if (s.format) t += ` <span class="fmt">(${esc(s.format)})</span>`;
  return t;
}

function constraints(s) {
  const out = [];
  const e = s.enum || (s.items && s.items.enum);
  if (e) out.push('One of: ' + e.map((v) => `<code>${esc(v === '' ? '""' : v)}</code>`).join(', '));
  if (s.pattern) out.push(`Pattern: <code>${esc(s.pattern)}</code>`);
  if (s.maxLength) out.push(`Max length ${esc(s.maxLength)}`);
  if (s.maxItems) out.push(`At most ${esc(s.maxItems)} items`);
  if (s.default !== undefined) out.push(`Default <code>${esc(JSON.stringify(s.default))}</code>`);
  return out.join('. ');
}

function flags(s, required) {
  const f = [];
  if (required) f.push('<span class="tag req">required</span>');
  if (s.readOnly) f.push('<span class="tag ro">output only</span>');
  if (s.writeOnly) f.push('<span class="tag wo">input only</span>');
  if (s['x-aquifer-immutable']) f.push('<span class="tag im">immutable</span>');
  return f.join(' ');
}

const h = [];
h.push('<!DOCTYPE html>');
h.push('<html lang="en"><head><meta charset="utf-8">');
h.push('<meta name="viewport" content="width=device-width, initial-scale=1">');
h.push(`<meta name="aquifer-spec-sha256" content="${sha}">`);
h.push(`<title>${esc(spec.info.title)} ${esc(spec.info.version)} reference</title>`);
h.push(`<style>
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1d2430;line-height:1.45}
nav{position:fixed;top:0;bottom:0;left:0;width:290px;overflow:auto;background:#f4f6f8;border-right:1px solid #d8dde3;padding:12px 14px;font-size:13px}
nav a{color:#24405f;text-decoration:none;display:block;padding:1px 0}
nav h3{margin:14px 0 4px;font-size:12px;text-transform:uppercase;color:#5a6675}
main{margin-left:320px;padding:18px 32px;max-width:1100px}
code{background:#eef1f4;padding:0 3px;border-radius:3px;font-size:90%}
table{border-collapse:collapse;width:100%;margin:6px 0 14px;font-size:14px}
th,td{border:1px solid #d8dde3;padding:4px 7px;text-align:left;vertical-align:top}
th{background:#f4f6f8}
.op{border:1px solid #d8dde3;border-radius:6px;padding:8px 14px;margin:18px 0}
.m{display:inline-block;min-width:58px;text-align:center;font-weight:bold;color:#fff;border-radius:4px;padding:1px 6px;font-size:13px}
.get{background:#2f7d32}.post{background:#1565c0}.patch{background:#8e5b00}.delete{background:#b3261e}.put{background:#6a1b9a}
.path{font-family:monospace;font-size:15px}
.tag{font-size:11px;border-radius:3px;padding:0 4px;color:#fff;white-space:nowrap}
.req{background:#b3261e}.ro{background:#5a6675}.wo{background:#6a1b9a}.im{background:#8e5b00}
.fmt{color:#5a6675}
</style></head><body>`);

// Navigation.
const ops = [];
for (const [p, item] of Object.entries(spec.paths)) {
  for (const [m, o] of Object.entries(item)) ops.push({ p, m, o, tag: (o.tags || ['Other'])[0] });
}
const tags = (spec.tags || []).map((t) => t.name);
for (const o of ops) if (!tags.includes(o.tag)) tags.push(o.tag);
h.push('<nav>');
h.push(`<strong>${esc(spec.info.title)} ${esc(spec.info.version)}</strong>`);
h.push('<a href="#intro">Introduction</a>');
for (const t of tags) {
  h.push(`<h3>${esc(t)}</h3>`);
  for (const o of ops.filter((x) => x.tag === t))
    h.push(`<a href="#op-${anchor(o.o.operationId)}">${esc(o.m.toUpperCase())} ${esc(o.o.summary || o.p)}</a>`);
}
h.push('<h3>Schemas</h3>');
for (const n of Object.keys(spec.components.schemas)) h.push(`<a href="#schema-${anchor(n)}">${esc(n)}</a>`);
h.push('</nav><main>');

h.push(`<h1 id="intro">${esc(spec.info.title)} <small>${esc(spec.info.version)}</small></h1>`);
h.push(`<p>${md(spec.info.description)}</p>`);
h.push(`<p>OpenAPI ${esc(spec.openapi)} document: <a href="/v1/openapi.yaml"><code>/v1/openapi.yaml</code></a>.</p>`);
const sch = spec.components.securitySchemes || {};
for (const [n, s] of Object.entries(sch))
  h.push(`<p>Security scheme <code>${esc(n)}</code>: HTTP ${esc(s.scheme)} (${esc(s.bearerFormat || '')}). ${md(s.description)}</p>`);

for (const t of tags) {
  h.push(`<h2>${esc(t)}</h2>`);
  for (const { p, m, o } of ops.filter((x) => x.tag === t)) {
    h.push(`<section class="op" id="op-${anchor(o.operationId)}">`);
    h.push(`<h3><span class="m ${esc(m)}">${esc(m.toUpperCase())}</span> <span class="path">${esc(p)}</span></h3>`);
    h.push(`<p><strong>${esc(o.summary)}</strong>${o.security && o.security.length === 0 ? ' &mdash; no token needed' : ''}</p>`);
    if (o.description) h.push(`<p>${md(o.description)}</p>`);
    const params = (o.parameters || []).map(resolve);
    if (params.length) {
      h.push('<table><tr><th>Parameter</th><th>In</th><th>Type</th><th>Description</th></tr>');
      for (const pr of params)
        h.push(`<tr><td><code>${esc(pr.name)}</code> ${pr.required ? '<span class="tag req">required</span>' : ''}</td><td>${esc(pr.in)}</td><td>${typeOf(pr.schema)}</td><td>${md(pr.description)} ${constraints(pr.schema || {})}</td></tr>`);
      h.push('</table>');
    }
    if (o.requestBody) {
      const rb = resolve(o.requestBody);
      for (const [ct, c] of Object.entries(rb.content || {}))
        h.push(`<p>Request body (<code>${esc(ct)}</code>${rb.required ? ', required' : ''}): ${typeOf(c.schema)}. ${md(rb.description)}</p>`);
    }
    h.push('<table><tr><th>Status</th><th>Body</th><th>Meaning</th></tr>');
    for (const [code, r0] of Object.entries(o.responses || {})) {
      const r = resolve(r0);
      const bodies = Object.entries(r.content || {}).map(([ct, c]) => `${typeOf(c.schema)} <span class="fmt">${esc(ct)}</span>`).join('<br>');
      h.push(`<tr><td>${esc(code)}</td><td>${bodies}</td><td>${md(r.description)}</td></tr>`);
    }
    h.push('</table></section>');
  }
}

h.push('<h2>Schemas</h2>');
for (const [n, s] of Object.entries(spec.components.schemas)) {
  h.push(`<section id="schema-${anchor(n)}"><h3>${esc(n)}</h3>`);
  if (s.description) h.push(`<p>${md(s.description)}</p>`);
  if (s.properties && Object.keys(s.properties).length) {
    h.push('<table><tr><th>Field</th><th>Type</th><th>Flags</th><th>Description</th></tr>');
    for (const [f, fs0] of Object.entries(s.properties)) {
      const req = (s.required || []).includes(f);
      h.push(`<tr><td><code>${esc(f)}</code></td><td>${typeOf(fs0)}</td><td>${flags(fs0, req)}</td><td>${md(fs0.description)} ${constraints(fs0)}</td></tr>`);
    }
    h.push('</table>');
  } else if (s.type === 'object') {
    h.push('<p>An empty object: <code>{}</code>.</p>');
  }
  h.push('</section>');
}
h.push(`<p class="fmt">Generated by openapi/gen-docs.js from openapi.yaml (sha256 ${sha}).</p>`);
h.push('</main></body></html>');
fs.writeFileSync(outPath, h.join('\n') + '\n');
