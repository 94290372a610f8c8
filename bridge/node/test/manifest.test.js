import assert from 'node:assert/strict';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { ManifestError, kebabCase, readMethodManifest } from '../index.js';
import { parseJsonBytes } from '../lib/json-text.js';

const here = dirname(fileURLToPath(import.meta.url));
const repo = join(here, '..', '..', '..');

function plugin(manifest, files = {}, name = 'plugin') {
  const directory = join(mkdtempSync(join(tmpdir(), 'mt-eval-node-')), name);
  mkdirSync(directory);
  writeFileSync(join(directory, 'method.json'),
    typeof manifest === 'string' ? manifest : JSON.stringify(manifest, null, 2));
  for (const [file, text] of Object.entries(files)) writeFileSync(join(directory, file), text);
  return directory;
}

function rejects(directory, path, message) {
  assert.throws(() => readMethodManifest(directory), (error) => {
    assert.ok(error instanceof ManifestError, `expected a ManifestError, got ${error}`);
    assert.equal(error.path, path);
    assert.match(error.message, message);
    return true;
  });
}

test('derives method ids exactly as the Python SDK (shared vectors)', () => {
  const vectors = JSON.parse(readFileSync(join(repo, 'bridge', 'vectors', 'method-ids.json'), 'utf8'));
  for (const { directory, method_id: expected } of vectors.cases) {
    assert.equal(kebabCase(directory), expected, directory);
  }
});

test('reads a Node plugin and resolves its entry', () => {
  const directory = plugin({ name: 'Glossary', method_id: 'glossary', node_entry: 'translate.js',
    supported_pairs: ['eng>spa'], dependencies: [] }, { 'translate.js': 'export async function translate() {}\n' });
  const read = readMethodManifest(directory);
  assert.equal(read.methodId, 'glossary');
  assert.equal(read.runtime, 'node');
  assert.equal(read.nodeEntry, join(directory, 'translate.js'));
  assert.deepEqual(read.supportedPairs, ['eng>spa']);
  assert.equal(readMethodManifest(join(directory, 'method.json')).directory, directory);
});

test('a seed-era Python manifest gets its id from the directory name', () => {
  const read = readMethodManifest(plugin({ name: 'Old', entry_point: 'pipeline:Old' }, {}, 'Old_Method v1'));
  assert.equal(read.methodId, 'old-method-v1');
  assert.equal(read.runtime, 'python');
  assert.equal(read.pythonEntry, 'pipeline:Old');
});

test('the seed fixture reads as a Python plugin', () => {
  const read = readMethodManifest(join(repo, 'tests', 'fixtures', 'fst-gated-v8'));
  assert.equal(read.methodId, 'fst-gated-v8');
  assert.equal(read.runtime, 'python');
});

test('invalid JSON names the line and column', () => {
  rejects(plugin('{"name": "x",\n  "node_entry" "t.js"}'), '$', /invalid JSON at line 2, column 16/);
});

test('missing directory, missing manifest and wrong shapes are explained', () => {
  rejects(join(tmpdir(), 'no-such-plugin-dir-xyz'), '$', /no such directory/);
  const empty = mkdtempSync(join(tmpdir(), 'mt-eval-node-'));
  writeFileSync(join(empty, 'corpus.tsv'), 'Hello.\tHola.\n');
  rejects(join(empty, 'corpus.tsv'), '$', /a file, not a directory/);
  rmSync(join(empty, 'corpus.tsv'));
  rejects(empty, '$', /missing: this is not a method plugin/);
  rejects(plugin('[1]'), '$', /expected an object, got an array/);
  rejects(plugin({ node_entry: 'translate.js' }), '$.name', /required field "name" is missing/);
  rejects(plugin({ name: 'x', method_id: 'My Method', node_entry: 't.js' }), '$.method_id',
    /"My Method" is not kebab-case\n {4}fix: .*"my-method"/);
  rejects(plugin({ name: 'x' }), '$', /no entry point/);
  rejects(plugin({ name: 'x', command: [] }), '$.command', /\$\.command: needs at least 1 item/);
});

test('node entries must be JavaScript files inside the plugin directory', () => {
  rejects(plugin({ name: 'x', node_entry: '../evil.js' }), '$.node_entry', /leaves the plugin directory/);
  rejects(plugin({ name: 'x', node_entry: 'translate.py' }, { 'translate.py': '' }), '$.node_entry',
    /is not a JavaScript file/);
  rejects(plugin({ name: 'x', node_entry: 'translate.js' }), '$.node_entry', /does not exist/);
  const outside = join(mkdtempSync(join(tmpdir(), 'mt-eval-node-')), 'outside.js');
  writeFileSync(outside, 'export async function translate() {}\n');
  const linked = plugin({ name: 'x', node_entry: 'translate.js' });
  symlinkSync(outside, join(linked, 'translate.js'));
  rejects(linked, '$.node_entry', /resolves outside the plugin directory/);
});

test('a key written twice is said at the path of its object, as the Python SDK says it', () => {
  // Before, every repeated key was said at $, however deep its object (tests/test_bad_input.py: REPEATED_KEYS).
  const cases = [
    ['{"dependencies": [{"id": "a", "id": "b"}]}', [['$.dependencies[0]', 'id']]],
    ['{"pairs": {"en:es": {"model": 1, "model": 2}}, "pairs": {}}', [['$.pairs["en:es"]', 'model'], ['$', 'pairs']]],
    ['[{"a": 1, "a": 1}, {"a": 1, "a": 1, "a": 1}]', [['$[0]', 'a'], ['$[1]', 'a']]],
  ];
  for (const [text, expected] of cases) {
    const [, problems] = parseJsonBytes(Buffer.from(text), 'method.json');
    assert.deepEqual(problems.map((p) => [p.path, p.message]),
      expected.map(([path, key]) => [path, `key "${key}" appears more than once in an object`]), text);
  }
  rejects(plugin('{"name": "x", "node_entry": "t.js", "dependencies": [{"id": "a", "id": "b"}]}'), '$.dependencies[0]',
    /key "id" appears more than once/);
});

test('a file NUL bytes took the place of (a crash, a full disk) is named as damaged, as Python names it', () => {
  for (const [text, message] of [['\0'.repeat(512), 'line 1, column 1: Expecting value'],
    ['{"a": 1}\n\0\0', 'line 2, column 1: Extra data']]) {
    const [, problems] = parseJsonBytes(Buffer.from(text), 'card.json');
    assert.equal(problems[0].message, `invalid JSON at ${message}`);
    assert.match(problems[0].hint, /^a NUL byte here, which no JSON text has: the file was damaged while it was written/);
  }
});
