// The Node side passes the shared contract vectors (bridge/vectors/contract/), as the Python side does: the same
// plugin is valid or invalid, with the same class and the same problems, word for word; the same licences
// are accepted; every dependency profile gets the class the spec's table gives; the same decision rows are refused,
// with the same first problem.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { test } from 'node:test';

import { decodeValue } from '../lib/contract/decode.js';
import { derive } from '../lib/contract/rules.js';
import { checkLicence } from '../lib/contract/licences.js';
import { validatePluginFiles } from '../lib/contract/plugin.js';
import { ManifestError, readMethodManifest } from '../lib/manifest.js';
import { rowsProblem } from '../lib/decision-rows.js';
import { ResultNotes, resultsFor } from '../lib/results.js';
import { repo } from './helpers/guests.js';

const vectors = (name) => JSON.parse(readFileSync(join(repo, 'bridge', 'vectors', 'contract', name), 'utf8')).cases;
const root = mkdtempSync(join(tmpdir(), 'mt-eval-vectors-'));

// value with each {"$number": "Infinity"} (or "-Infinity", "NaN": what JSON cannot write) as that number.
function numbers(value) {
  if (Array.isArray(value)) return value.map(numbers);
  if (value === null || typeof value !== 'object') return value;
  const keys = Object.keys(value);
  if (keys.length === 1 && keys[0] === '$number') return Number(value.$number);
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, numbers(item)]));
}

function writePlugin(c) {
  const directory = join(root, c.directory ?? c.name);
  for (const [relative, text] of Object.entries(c.files)) {
    mkdirSync(dirname(join(directory, relative)), { recursive: true });
    writeFileSync(join(directory, relative), text);
  }
  for (const relative of c.directories ?? []) mkdirSync(join(directory, relative), { recursive: true }); // (where a file belongs)
  for (const [relative, target] of Object.entries(c.links ?? {})) { // (a symlink, its target relative to the link)
    mkdirSync(dirname(join(directory, relative)), { recursive: true });
    symlinkSync(target, join(directory, relative));
  }
  return directory;
}

const relative = (text, directory) => (text === null ? null : text.replaceAll(`${directory}/`, ''));

test('plugins: the same report as Python, problem for problem', () => {
  for (const c of vectors('plugins.json')) {
    const directory = writePlugin(c);
    const { directory: _, problems, ...report } = validatePluginFiles(directory);
    report.problems = problems.map((p) => [relative(p.file, directory), p.path, p.severity, p.code,
      relative(p.message, directory), relative(p.hint, directory)]);
    assert.deepEqual(report, c.report, c.name);
  }
});

test('plugins: a plugin Python refuses to load is refused with the same message', () => {
  for (const c of vectors('plugins.json')) {
    const directory = join(root, c.directory ?? c.name);
    if (c.load_error === null) {
      assert.doesNotThrow(() => readMethodManifest(directory), c.name);
      continue;
    }
    assert.throws(() => readMethodManifest(directory), (error) => {
      assert.ok(error instanceof ManifestError, `${c.name}: ${error}`);
      assert.equal(error.message.replaceAll(directory, '{plugin}'), c.load_error, c.name);
      return true;
    });
  }
});

test('dependency matrix: every access × licence × flag combination gets the class of the spec', () => {
  for (const c of vectors('dependency-matrix.json')) {
    const manifest = { name: 'm', node_entry: 'translate.js', dependencies: [c.dependency] };
    const { value, problems } = decodeValue(manifest, 'method', { file: 'method.json' });
    assert.deepEqual(problems.filter((p) => p.code !== 'undeclared-class').map((p) => [p.path, p.severity, p.code]), c.problems, c.name);
    const errors = problems.some((p) => p.severity === 'error');
    const derived = errors || value === null ? null : derive(value.dependencies).contributions[0];
    assert.equal(derived?.dependencyClass ?? null, c.class, c.name);
    if (derived) assert.equal(derived.reason, c.reason, c.name);
  }
});

test('licences: the same verdict, normal form, openness, restriction and message', () => {
  for (const c of vectors('licences.json')) {
    const check = checkLicence(c.licence);
    assert.deepEqual([check.ok, check.normalized ?? null, check.isOpen, check.restriction, check.message ?? null, check.hint ?? null],
      [c.ok, c.normalized, c.open, c.restriction, c.message, c.hint], c.licence);
  }
});

// The vector's results with each error said per language ({python, node}) as the Node kit says it.
const inNodeWords = (results) => results.map((r) => (r.error !== null && typeof r.error === 'object' ? { ...r, error: r.error.node } : r));

test('results: what a method returned becomes the same results, with the same notes', () => {
  for (const c of vectors('results.json')) {
    const notes = new ResultNotes();
    const unknown = [];
    const results = resultsFor(c.entries, numbers(c.returned), { label: 'the method', notes, elapsedS: c.elapsed_s, onUnknown: (item) => unknown.push(item) });
    assert.deepEqual(results, inNodeWords(c.results), c.name);
    assert.equal(unknown.length, c.unknown, c.name);
    assert.deepEqual(notes.counts, c.notes, c.name);
  }
});

for (const c of vectors('decision-rows.json')) {
  test(`decision rows: ${c.name}`, () => {
    assert.equal(rowsProblem(c.rows), c.problem);
  });
}

test('results: a latency that is not a number is named NaN, as in Python, not null', () => {
  const [result] = resultsFor([{ id: 'a', source: 'x' }], [{ id: 'a', predicted: 'A', latency_s: NaN }], { label: 'the method' });
  assert.equal(result.error, 'the method returned an unusable result: $.latency_s: must be >= 0, got NaN');
});
