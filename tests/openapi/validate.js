#!/usr/bin/env node
// tests/openapi/validate.js: check recorded HTTP answers against the spec.
//
//   node tests/openapi/validate.js [--spec openapi/openapi.yaml] DIR...
//
// Each *.json file in DIR is one answer written by tests/openapi/record.sh:
//   {"method": "GET", "path": "/v1/...", "status": 200, "body": ...}
// The path is matched to the spec's route template, the status to the
// operation's documented responses (exact code, else `default` for 5xx),
// and a JSON body is validated with ajv against that response's schema.
// Every mismatch is listed; the exit status is 1 if there was any, 2 on
// usage errors. Needs ajv, ajv-formats and js-yaml (openapi/package.json;
// NODE_PATH may point at their node_modules).
'use strict';
const fs = require('fs');
const path = require('path');
const yaml = require('js-yaml');
const Ajv = require('ajv');
const addFormats = require('ajv-formats');

let specPath = path.join(__dirname, '..', '..', 'openapi', 'openapi.yaml');
const dirs = [];
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  if (argv[i] === '--spec') specPath = argv[++i];
  else dirs.push(argv[i]);
}
if (!dirs.length) {
  console.error('usage: validate.js [--spec openapi.yaml] DIR...');
  process.exit(2);
}

const spec = yaml.load(fs.readFileSync(specPath, 'utf8'));
const ajv = new Ajv({ strict: false, allErrors: true, validateFormats: true });
addFormats(ajv);
ajv.addFormat('int64', { type: 'string', validate: (s) => /^-?[0-9]+$/.test(s) });
ajv.addFormat('int32', { type: 'number', validate: (n) => Number.isInteger(n) && n >= -2147483648 && n <= 2147483647 });
ajv.addFormat('double', { type: 'number', validate: () => true });
// OpenAPI annotations that are not JSON Schema keywords.
for (const k of ['x-aquifer-immutable', 'example', 'discriminator', 'xml', 'externalDocs'])
  if (!ajv.getKeyword(k)) ajv.addKeyword(k);
ajv.addSchema(spec, 'spec');

// Route templates -> regexes. Parameters match one segment without ':'.
const routes = [];
for (const [tmpl, item] of Object.entries(spec.paths)) {
  const re = new RegExp('^' + tmpl.split(/(\{[^}]+\})/).map((part) =>
    part.startsWith('{') ? '[^/:]+' : part.replace(/[.*+?^$()|[\]\\]/g, '\\$&')).join('') + '$');
  for (const method of Object.keys(item)) routes.push({ tmpl, method: method.toUpperCase(), re, op: item[method] });
}

function resolve(o) {
  while (o && o.$ref) {
    let t = spec;
    for (const p of o.$ref.replace(/^#\//, '').split('/')) t = t[p.replace(/~1/g, '/').replace(/~0/g, '~')];
    o = t;
  }
  return o;
}
const validators = new Map();
const problems = [];
let checked = 0;
const seen = new Set();
for (const dir of dirs) {
  const files = fs.readdirSync(dir).filter((f) => f.endsWith('.json')).sort();
  for (const f of files) {
    const file = path.join(dir, f);
    let rec;
    try {
      rec = JSON.parse(fs.readFileSync(file, 'utf8'));
    } catch (e) {
      problems.push(`${file}: not a JSON record (${e.message})`);
      continue;
    }
    const what = `${rec.method} ${rec.path} -> ${rec.status} (${path.basename(file)})`;
    checked++;
    const method = String(rec.method || '').toUpperCase();
    const byPath = routes.filter((r) => r.re.test(rec.path));
    if (!byPath.length) {
      // Unknown paths answer 404 with the error body; nothing to map.
      if (rec.status === 404 || rec.status === 405) continue;
      problems.push(`${what}: path matches no route of the spec`);
      continue;
    }
    const route = byPath.find((r) => r.method === method);
    if (!route) {
      if (rec.status === 405) continue; // the router's "method not allowed"
      problems.push(`${what}: the spec has no ${method} on ${byPath[0].tmpl}`);
      continue;
    }
    const responses = route.op.responses || {};
    let code = String(rec.status);
    if (!responses[code]) {
      if (rec.status >= 500 && responses.default) code = 'default';
      else {
        problems.push(`${what}: status ${rec.status} is not documented for ${method} ${route.tmpl} (documented: ${Object.keys(responses).join(', ')})`);
        continue;
      }
    }
    seen.add(`${method} ${route.tmpl} ${code}`);
    const resp = resolve(responses[code]);
    const content = resp.content || {};
    const json = content['application/json'];
    if (!json) {
      if (typeof rec.body !== 'string') problems.push(`${what}: expected a non-JSON body (${Object.keys(content).join(', ')}), got JSON`);
      continue;
    }
    const ptr = responses[code].$ref
      ? `${responses[code].$ref.slice(1)}/content/application~1json/schema`
      : `/paths/${route.tmpl.replace(/~/g, '~0').replace(/\//g, '~1')}/${method.toLowerCase()}/responses/${code}/content/application~1json/schema`;
    let validate;
    try {
      validate = validators.get(ptr) || ajv.compile({ $ref: `spec#${ptr}` });
      validators.set(ptr, validate);
    } catch (e) {
      problems.push(`${what}: cannot compile the schema at ${ptr}: ${e.message}`);
      continue;
    }
    if (!validate(rec.body)) {
      const errs = validate.errors
        .filter((e) => e.keyword !== 'oneOf' || validate.errors.length === 1)
        .slice(0, 8)
        .map((e) => `    ${e.instancePath || '(body)'} ${e.message}${e.params && e.params.additionalProperty ? ` "${e.params.additionalProperty}"` : ''}${e.params && e.params.allowedValues ? ` ${JSON.stringify(e.params.allowedValues)}` : ''}`);
      problems.push(`${what}: body does not match ${ptr}\n${errs.join('\n')}`);
    }
  }
}

if (checked === 0) problems.push(`no records found in ${dirs.join(', ')}`);
for (const p of problems) console.log(`MISMATCH: ${p}`);
console.log(`validate.js: ${checked} responses checked against ${path.basename(specPath)}, ${seen.size} distinct route/status pairs, ${problems.length} mismatches`);
process.exit(problems.length ? 1 : 0);
