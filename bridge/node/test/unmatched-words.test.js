// Results that match no entry: the warning names what came back (the first item that is no object, as got() words
// it, a string cut short) and what a method returns instead, in the words of mt_eval.unmatched_results; what a guest
// sends for such an item (strayStandIn) is said alike; and the same warning is not said again for a retried call.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { ResultNotes } from '../lib/results.js';
import { sayStrays, strayStandIn, straysDropped } from '../lib/unmatched.js';

const EXPECTED = 'they were dropped (a result is {"id": entry["id"], "predicted": TEXT}, one per entry)';
const LONG = 'Buenos días, mi amigo: 😀 una frase que sigue y sigue sin parar';

test('the warning names the first item that is no object and the result expected instead', () => {
  const cases = [
    [['Buenos días.', 'Gracias.'], '2 items that are not an object, e.g. the string "Buenos días."'],
    [[LONG], `1 item that is not an object: the string ${JSON.stringify(`${[...LONG].slice(0, 37).join('')}...`)}`],
    [[5], '1 item that is not an object: the number 5'],
    [[null], '1 item that is not an object: null'],
    [[['x']], '1 item that is not an object: an array'],
    [[{ id: 1, predicted: 'x' }, 'Gracias.'], 'ids 1; 1 item that is not an object: the string "Gracias."'],
  ];
  for (const [items, words] of cases) {
    const said = `the method returned results that match no entry it was sent (${words}); ${EXPECTED}`;
    assert.equal(straysDropped(items), said);
  }
});

test('what a guest sends for an item is said as the item is, and is JSON', () => {
  const items = [LONG, 'short', 5, 2.5, true, null, undefined, ['x'], () => 1, Number.NaN, { id: 7 }, { id: ['x'] }];
  for (const item of items) {
    const sent = JSON.parse(JSON.stringify([strayStandIn(item)]));
    assert.equal(straysDropped(sent), straysDropped([item]), String(item));
  }
});

test('a warning said already (a retried call returning the same) is not said again', () => {
  const notes = new ResultNotes();
  const said = [];
  for (const strays of [['Hola'], ['Hola'], ['Adiós']]) sayStrays(notes, strays, (text) => said.push(text));
  assert.equal(said.length, 2);
  assert.match(said[0], /e\.g\.|: the string "Hola"/);
  assert.match(said[1], /the string "Adiós"/);
});
