// node --test examples/rules-grader/test: the Node half on its own (tests/test_decision_examples.py checks that
// grader.py gives the same distributions).
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { decide, quality } from '../decide.js';

const levels = [0, 1, 2, 3, 4].map((value) => ({ value }));
const adequacy = { type: 'score', instructions: 'How adequate?', levels };
const row = (state, questions = { adequacy }) => ({ id: 'r', state, questions });
const sum = (probabilities) => Object.values(probabilities).reduce((a, b) => a + b, 0);

test('a candidate equal to its reference is judged best, and the distribution sums to 1', async () => {
  const [result] = await decide([row({ source: 'The cat.', candidate: 'El gato.', reference: 'El gato.' })]);
  const { probabilities } = result.answers.adequacy;
  assert.ok(Math.abs(sum(probabilities) - 1) < 1e-12);
  assert.ok(probabilities['4'] > 0.7 && probabilities['4'] > probabilities['3']);
});

test('words copied from the source lower the quality', () => {
  const good = quality('The dog sleeps.', 'El perro duerme.', 'El perro duerme.');
  const copied = quality('The dog sleeps.', 'El dog sleeps.', 'El perro duerme.');
  assert.ok(good > copied);
  assert.equal(quality('Hello there', 'Hello there', null), 0);
});

test('noul, choice and a missing candidate', async () => {
  const questions = {
    ok: { type: 'noul', instructions: '?' },
    better: { type: 'choice', instructions: '?', options: ['a', 'b', 'tie'] },
  };
  const [result] = await decide([row({ source: 'Thank you.', reference: 'Gracias.', a: 'Gracias.', b: 'Gato.' }, questions)]);
  assert.deepEqual(result.answers.ok, { error: 'the state has no "candidate" text to judge' });
  const { a, b, tie } = result.answers.better.probabilities;
  assert.ok(a > tie && tie > b);
});

test('a question named __proto__ is answered as any other (as grader.py answers it)', async () => {
  const questions = JSON.parse('{"__proto__": {"type": "noul", "instructions": "ok?"}}');
  const [result] = await decide([row({ source: 'Turn left.', candidate: 'Gira a la izquierda.',
    reference: 'Gira a la izquierda.' }, questions)]);
  assert.ok(Object.hasOwn(result.answers, '__proto__'), JSON.stringify(result));
  assert.ok(Math.abs(sum(result.answers.__proto__.probabilities) - 1) < 1e-12);
});
