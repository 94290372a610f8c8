// This plugin's own tests: `node --test` (needs only Node >= 20).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

import { decide, quality } from '../decide.js';

const ROWS = readFileSync(new URL('../sample/decisions.jsonl', import.meta.url), 'utf8')
  .split('\n').filter((line) => line.trim()).map((line) => JSON.parse(line))
  .map((row) => Object.fromEntries(Object.entries(row).filter(([key]) => key !== 'gold')));
const total = (probabilities) => Object.values(probabilities).reduce((a, b) => a + b, 0);

test('every sample question gets a distribution that sums to 1', async () => {
  const results = await decide(ROWS);
  assert.deepEqual(results.map((r) => r.id), ROWS.map((r) => r.id));
  for (const result of results) {
    for (const answer of Object.values(result.answers)) assert.ok(Math.abs(total(answer.probabilities) - 1) < 1e-12);
  }
});

test('a candidate equal to its reference gets the top level', async () => {
  const [first] = await decide(ROWS.slice(0, 1));
  assert.deepEqual(first.answers.adequacy.probabilities, { 0: 0, 1: 0, 2: 0, 3: 1 });
  assert.deepEqual(first.answers.acceptable.probabilities, { true: 1, false: 0 });
});

test('choices prefer the translation closer to the reference', async () => {
  const [result] = await decide(ROWS.slice(4, 5));
  const { a, b, tie } = result.answers.better.probabilities;
  assert.ok(a > tie && tie > b);
});

test('without a reference, quality is how well the lengths agree', () => {
  assert.equal(quality({ source: 'one two three four' }, 'uno dos'), 0.5);
  assert.equal(quality({}, ''), 1);
});

test('a row without a candidate fails its question with the reason', async () => {
  const [result] = await decide([{ id: 'x', state: { source: 'Hello.' }, questions: { ok: { type: 'noul', instructions: '?' } } }]);
  assert.deepEqual(result.answers.ok, { error: 'the state has no "candidate" text' });
});
