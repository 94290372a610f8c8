// The answer rules on the Node side pass the same vectors as the Python SDK (bridge/vectors/decisions).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { checkDecision, matchDecisions, numberText, optionsOf, rowsProblem } from '../index.js';
import { repo } from './helpers/guests.js';

const { cases } = JSON.parse(readFileSync(join(repo, 'bridge', 'vectors', 'decisions', 'answers.json'), 'utf8'));

function close(expected, actual, path = '$') {
  if (typeof expected === 'number') {
    assert.equal(typeof actual, 'number', path);
    assert.ok(Math.abs(expected - actual) <= 1e-12, `${path}: ${expected} != ${actual}`);
  } else if (expected !== null && typeof expected === 'object') {
    assert.deepEqual(Object.keys(actual), Object.keys(expected), path);
    for (const key of Object.keys(expected)) close(expected[key], actual[key], `${path}.${key}`);
  } else {
    assert.equal(actual, expected, path);
  }
}

for (const vector of cases) {
  test(`vector: ${vector.name}`, () => {
    close(vector.expect, checkDecision(vector.row, vector.result, vector.tolerance ?? 1e-3));
  });
}

test('results are paired with rows by id', () => {
  const rows = ['a', 'b', 'c'].map((id) => ({ id, state: {}, questions: { q: { type: 'noul', instructions: '?' } } }));
  const answers = { q: { probabilities: { true: 1, false: 0 } } };
  const unknown = [];
  const results = matchDecisions(rows, [{ id: 'c', answers }, { id: 'a', answers }, { id: 'a', answers }, { id: 'zz' }],
    { source: 'the method', onUnknown: (raw) => unknown.push(raw) });
  assert.deepEqual(results.map((r) => [r.id, r.error]), [
    ['a', 'the method returned 2 results for this row'], ['b', 'the method returned no result for this row'], ['c', null]]);
  assert.deepEqual(unknown, [{ id: 'zz' }]);
});

test('rows are checked before they are sent (bridge/vectors/contract/decision-rows.json has the rest)', () => {
  assert.equal(rowsProblem([{ id: 'r', state: {}, questions: { q: { type: 'rating', instructions: '?' } } }]),
    'rows[0].questions.q.type: the string "rating" is not a valid question type');
  assert.equal(rowsProblem([{ id: 'r', state: {}, questions: {} }]), 'rows[0].questions: a row needs at least one question');
  assert.equal(rowsProblem([{ id: 'r', state: 'x', questions: {} }], 'params.rows'),
    'params.rows[0].state: expected an object, got the string "x"');
  assert.equal(rowsProblem([{ id: 'r', state: {}, questions: { q: { type: 'score', instructions: '?', levels: { 0: 'bad' } } } }]),
    'rows[0].questions.q.levels: expected an array of objects, got an object');
  // (no JSON spelling: not in the vectors) a NaN level is said to be no number, as Python says it
  assert.equal(rowsProblem([{ id: 'r', state: {}, questions: { q: { type: 'score', instructions: '?', levels: [{ value: 0 }, { value: Number.NaN }] } } }]),
    'rows[0].questions.q.levels[1].value: NaN is not a level value: not a number');
});

test('options of each type, and numbers as labels print them', () => {
  assert.deepEqual(optionsOf({ type: 'noul' }), ['true', 'false']);
  assert.deepEqual(optionsOf({ type: 'score', levels: [{ value: 0 }, { value: 2.5 }, { value: 5, label: 'top' }] }), ['0', '2.5', 'top']);
  assert.deepEqual([1, 0.1 + 0.2, 1e-7, -0, 2 / 3].map(numberText), ['1', '0.3', '0', '0', '0.666667']);
});

test('an expected value is the correctly rounded sum, as Python math.fsum gives it', async () => {
  const { expectedValue } = await import('../lib/decisions.js');
  const question = (values) => ({ type: 'score', levels: values.map((_, i) => ({ label: `l${i}`, value: 1 })) });
  const probabilities = (values) => Object.fromEntries(values.map((value, i) => [`l${i}`, value]));
  // (math.fsum([1e16, 1.0, 1e-16]) == 1.0000000000000002e16: the partials added without their final rounding
  // gave 1e16)
  for (const [values, sum] of [[[1e16, 1, 1e-16], 10000000000000002], [[0.1, 0.2, 0.3], 0.6], [[0.5, 0.4, 0.05], 0.9500000000000001]]) {
    assert.equal(expectedValue(question(values), probabilities(values)), sum, String(values));
  }
});
