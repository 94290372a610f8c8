// What the Node side validates with is generated from the schemas, and nothing else restates them:
// lib/generated/schemas/STEM.json must equal bridge/schemas/STEM.schema.json (`mt-eval schemas bridge/schemas` writes
// both), and no hand-written file of the package spells out the fields of a schema definition.
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';

import { nodePackage, repo } from './helpers/guests.js';
import { declaredDefaults, defaults, schema, schemas } from '../lib/contract/schema.js';

const schemaDir = join(repo, 'bridge', 'schemas');
const generated = schemas();

test('lib/generated/schemas holds exactly the schemas of bridge/schemas', () => {
  const files = readdirSync(schemaDir).filter((name) => name.endsWith('.schema.json'));
  assert.deepEqual(Object.keys(generated).sort(), files.map((name) => name.replace('.schema.json', '')).sort(),
    'a schema is missing from, or extra in, lib/generated/schemas: run `mt-eval schemas bridge/schemas`');
  for (const name of files) {
    const stem = name.replace('.schema.json', '');
    assert.deepEqual(generated[stem], JSON.parse(readFileSync(join(schemaDir, name), 'utf8')),
      `lib/generated/schemas/${stem}.json differs from bridge/schemas/${name}: run \`mt-eval schemas bridge/schemas\``);
  }
});

test('a schema is read once, when first asked for, and an unknown one is named with those there are', () => {
  assert.equal(schema('run-config'), schema('run-config'));
  assert.ok(Object.isFrozen(schema('run-config')));
  for (const unknown of ['no-such-schema', '../package', 'Method']) {
    assert.throws(() => schema(unknown), (error) => error.message.startsWith(`no schema "${unknown}"; known: `)
      && error.message.includes('run-config') && !error.message.includes('.json'));
  }
});

test('lib/generated/defaults.json holds exactly the defaults the schemas declare', () => {
  const declared = JSON.parse(readFileSync(join(nodePackage, 'lib', 'generated', 'defaults.json'), 'utf8')).defaults;
  const expected = {};
  for (const [stem, document] of Object.entries(generated)) {
    for (const [name, definition] of Object.entries(document.$defs ?? {})) {
      const found = defaults(definition);
      if (Object.keys(found).length) (expected[stem] ??= {})[name] = found;
    }
  }
  assert.deepEqual(declared, expected, 'lib/generated/defaults.json is stale: run `mt-eval schemas bridge/schemas`');
  assert.deepEqual(declaredDefaults('bridge-initialize-result', 'Capabilities'),
    defaults(generated['bridge-initialize-result'].$defs.Capabilities));
  assert.throws(() => declaredDefaults('bridge-initialize-result', 'Nothing'), /no defaults of "Nothing"/);
});

// Every hand-written JavaScript file of the package (the generated folder and the tests aside).
function handWritten(folder = nodePackage) {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) => {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) return ['generated', 'test', 'node_modules', 'bench'].includes(entry.name) ? [] : handWritten(path);
    return entry.name.endsWith('.js') ? [path] : [];
  });
}

const stripComments = (code) => code.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`\\])\/\/.*$/gm, '$1');

// A restated field list: a list of three or more field names of one definition ('a', "b", ...), or an object
// literal giving three or more of its fields constant values (defaults written out by hand). Building a value
// from variables ({ id: entry.id, ... }) is not a list of fields.
const CONSTANT = /^(null|true|false|-?\d[\d.e+-]*|'[^']*'|"[^"]*"|\[\]|\{\})$/;
function fieldLists(code, definitions) {
  const found = [];
  const literals = code.match(/\[[^[\]]*\]|\{[^{}]*\}/g) ?? [];
  for (const literal of literals) {
    const listed = new Set([...literal.matchAll(/['"]([A-Za-z_$][\w$]*)['"]\s*(?=[,\]]|$)/g)].map((m) => m[1]));
    const constants = new Set([...literal.matchAll(/\b([A-Za-z_$][\w$]*)\s*:\s*([^,}]+)/g)]
      .filter((m) => CONSTANT.test(m[2].trim())).map((m) => m[1]));
    for (const [defName, fields] of definitions) {
      for (const names of [listed, constants]) {
        const shared = fields.filter((field) => names.has(field));
        if (shared.length >= 3) found.push(`${defName}: ${shared.join(', ')} in ${literal.slice(0, 80).replace(/\s+/g, ' ')}`);
      }
    }
  }
  return found;
}

test('no hand-written file of the Node package restates a schema\'s field list', () => {
  const definitions = new Map();
  for (const document of Object.values(generated)) {
    for (const [name, definition] of Object.entries(document.$defs ?? {})) {
      const fields = Object.keys(definition.properties ?? {});
      if (fields.length >= 3) definitions.set(name, fields);
    }
  }
  const offences = handWritten().flatMap((file) => fieldLists(stripComments(readFileSync(file, 'utf8')), definitions)
    .map((offence) => `${relative(nodePackage, file)}: ${offence}`));
  assert.deepEqual(offences, [], 'derive these from the schemas (lib/contract/schema.js) instead');
});

test('the check finds a field list when there is one', () => {
  const definitions = new Map([['Usage', ['prompt_tokens', 'completion_tokens', 'total_tokens']]]);
  assert.equal(fieldLists("const KEYS = new Set(['prompt_tokens', 'completion_tokens', 'total_tokens']);", definitions).length, 1);
  assert.equal(fieldLists('return { prompt_tokens: 0, completion_tokens: 0, total_tokens: null };', definitions).length, 1);
  assert.equal(fieldLists("const one = ['prompt_tokens'];", definitions).length, 0);
  assert.equal(fieldLists('return { prompt_tokens: p, completion_tokens: c, total_tokens: p + c };', definitions).length, 0);
});
