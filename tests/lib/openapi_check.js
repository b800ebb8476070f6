// openapi_check.js - every answer the harness recorded (tests/lib/harness.sh,
// api) held against docs/openapi.json: its path and method are in the
// document, its status is one the operation lists, its body is what the
// document says (JSON Schema 2020-12, checked with ajv).
// SPDX-License-Identifier: MIT
//
// Usage: node openapi_check.js NODE_MODULES OPENAPI.JSON ANSWERS_DIR
// ANSWERS_DIR/index has a line per answer: METHOD TAB PATH TAB STATUS TAB
// CONTENT-TYPE TAB FILE (the body, in ANSWERS_DIR). Prints one line per
// answer that does not match and a last line "N answers, N wrong"; exits
// 0 when none is wrong.
'use strict';
const fs = require('fs');
const path = require('path');

const [modules, docPath, dir] = process.argv.slice(2);
const Ajv2020 = require(path.join(modules, 'ajv/dist/2020')).default;
const addFormats = require(path.join(modules, 'ajv-formats')).default;

const doc = JSON.parse(fs.readFileSync(docPath, 'utf8'));
const ajv = new Ajv2020({strict: false, allErrors: true});
addFormats(ajv);
ajv.addSchema(doc, 'openapi.json');

// The path templates, those with fewer parameters first (a literal
// segment wins over a {name}).
const templates = Object.keys(doc.paths).map((t) => ({
  t,
  re: new RegExp('^' + t.replace(/[.]/g, '\\.').replace(/\{[^}]+\}/g,
      '[^/]+') + '$'),
  params: (t.match(/\{/g) || []).length,
})).sort((a, b) => a.params - b.params);

const validators = new Map();
function validator(pointer) {
  if (!validators.has(pointer))
    validators.set(pointer, ajv.compile({$ref: 'openapi.json#' + pointer}));
  return validators.get(pointer);
}
const esc = (s) => s.replace(/~/g, '~0').replace(/\//g, '~1');

// What is wrong with one answer, or null.
function check(method, p, status, ctype, body) {
  const m = method.toLowerCase();
  const tpl = templates.find((x) => x.re.test(p));
  let op = tpl && doc.paths[tpl.t][m];
  let pointer;
  if (!op) {
    // a path that names nothing (404) or a method the path does not
    // take (400): the error body, as for any other error
    if (!(status === '404' || status === '400'))
      return `${method} ${p}: not in the document (status ${status})`;
    pointer = '/components/schemas/Error';
  } else {
    const codes = [status, status[0] + 'XX', 'default'];
    const code = codes.find((c) => op.responses[c]);
    if (!code)
      return `${method} ${tpl.t}: status ${status} is not documented`;
    let resp = op.responses[code];
    let base = `/paths/${esc(tpl.t)}/${m}/responses/${code}`;
    if (resp.$ref) {
      base = resp.$ref.slice(1);
      resp = base.split('/').slice(1).reduce((o, k) =>
        o[k.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
    }
    const types = Object.keys(resp.content || {});
    if (!types.length)
      return body.length ? `${method} ${tpl.t} ${status}: a body where ` +
          'the document has none' : null;
    const type = (ctype || '').split(';')[0].trim();
    if (!types.includes(type))
      return `${method} ${tpl.t} ${status}: Content-Type ${ctype}, the ` +
          `document says ${types.join(', ')}`;
    if (type !== 'application/json')
      return null;
    pointer = `${base}/content/${esc(type)}/schema`;
  }
  let value;
  try {
    value = JSON.parse(body);
  } catch (e) {
    return `${method} ${p} ${status}: not JSON: ${e.message}`;
  }
  const v = validator(pointer);
  if (v(value))
    return null;
  // a wrong value says more than a missing field: those first
  const errs = v.errors.filter((e) => e.keyword !== 'required')
    .concat(v.errors.filter((e) => e.keyword === 'required'));
  return `${method} ${p} ${status}: ` + errs.slice(0, 40).map((e) =>
    `${e.instancePath || '/'} ${e.message}` +
    (e.params && e.params.additionalProperty ?
      ` (${e.params.additionalProperty})` : '')).join('; ');
}

let n = 0;
let wrong = 0;
const index = fs.readFileSync(path.join(dir, 'index'), 'utf8');
for (const line of index.split('\n')) {
  if (!line)
    continue;
  const [method, p, status, ctype, file] = line.split('\t');
  const body = fs.readFileSync(path.join(dir, file), 'utf8');
  const why = check(method, p, status, ctype, body);
  n++;
  if (why) {
    wrong++;
    console.log(why);
    console.log('    body: ' + body.slice(0, 300));
  }
}
console.log(`${n} answers, ${wrong} wrong`);
process.exit(wrong ? 1 : 0);
