// node --test examples/rules-eng-spa/test: the Node half on its own (tests/test_dual_runtime.py checks
// that pipeline.py gives the same results).
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { inflect, parseLexicon, plural, translate } from '../translate.js';

const one = async (source) => (await translate([{ id: 'x', source }], {}))[0];

test('noun groups are reordered and agree with their noun', async () => {
  assert.equal((await one('There is a new teacher in the school.')).predicted, 'Hay un maestro nuevo en la escuela.');
  assert.equal((await one('These red cars are new.')).predicted, 'Estos coches rojos son nuevos.');
  assert.equal((await one('A very big house\nand a small dog.')).predicted, 'Una casa muy grande\ny un perro pequeño.');
});

test('adjectives after a copula agree with the subject; de el contracts', async () => {
  assert.equal((await one('The door is big and red.')).predicted, 'La puerta es grande y roja.');
  assert.equal((await one('She is tall. He is tall.')).predicted, 'Ella es alta. Él es alto.');
  assert.equal((await one('The cities of the world.')).predicted, 'Las ciudades del mundo.');
});

test('unknown words, spacing and capitals are kept, and counted', async () => {
  const result = await one('  Zebras are green, I said.  ');
  assert.equal(result.predicted, '  Zebras son verde, yo said.  ');
  assert.deepEqual(result.metadata, { unknown_words: 2 });
});

test('an empty or wordless source and another pair are abstained on, with the reason', async () => {
  for (const source of ['', ' \u0007\ufffd ', '!!! ...']) {
    const result = await one(source);
    assert.equal(result.abstained, true);
    assert.equal(result.predicted, undefined);
    assert.match(result.abstain_reason, /no word to translate/);
  }
  const [german] = await translate([{ id: 'x', source: 'Good morning.' }], { source_lang: 'eng', target_lang: 'deu' });
  assert.deepEqual([german.abstained, german.abstain_reason], [true, 'unsupported pair eng>deu: this method translates eng>spa only']);
});

test('Spanish plurals and agreement', () => {
  assert.deepEqual(['casa', 'ciudad', 'feliz', 'canción', 'café'].map(plural), ['casas', 'ciudades', 'felices', 'canciones', 'cafés']);
  assert.deepEqual([inflect('nuevo', 'f', 'pl'), inflect('grande', 'f', 'sg'), inflect('trabajador', 'f', 'sg')],
    ['nuevas', 'grande', 'trabajadora']);
  assert.throws(() => parseLexicon('cat\tgato\n', 'x.tsv'), /^Error: x\.tsv:1: expected/);
});
