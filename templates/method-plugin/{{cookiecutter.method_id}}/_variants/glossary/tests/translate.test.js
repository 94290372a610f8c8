// This plugin's own tests: `node --test` (needs only Node >= 20).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

import { translate } from '../translate.js';

const CORPUS = readFileSync(new URL('../sample/corpus.jsonl', import.meta.url), 'utf8')
  .split('\n').filter((line) => line.trim()).map((line) => JSON.parse(line));
const EXPECTED = {
  s1: 'Buenas noches, mi amigo!',
  s2: 'El gato bebe agua.',
  s3: 'Gracias por el libro.',
  s4: 'La casa es muy grande.',
  s5: 'Leo un libro nuevo cada día.',
};

const config = (params = {}) => ({ source_lang: 'eng', target_lang: 'spa', params });
const predictions = async (...sources) => (await translate(sources.map((source, i) => ({ id: String(i), source })),
  config())).map((r) => r.predicted);

test('the sample corpus', async () => {
  const results = await translate(CORPUS, config());
  assert.deepEqual(Object.fromEntries(results.map((r) => [r.id, r.predicted])), EXPECTED);
  assert.ok(results.every((r) => r.latency_s >= 0 && r.metadata.glossary_matches > 0));
});

test('the longest phrase wins and capitals and punctuation survive', async () => {
  assert.deepEqual(await predictions('The house and the city, please!', 'the house'),
    ['La casa y la ciudad, por favor!', 'la casa']);
});

test('a phrase never spans punctuation', async () => {
  assert.deepEqual(await predictions('The... house?'), ['El... casa?']);
});

test('unknown words are kept and extra fields ignored', async () => {
  const results = await translate([{ id: 'z', source: 'The zebra is green.', domain: 'zoo' }], config());
  assert.deepEqual(results.map((r) => [r.id, r.predicted]), [['z', 'El zebra es green.']]);
});

test('a source without a word and another pair are declined', async () => {
  const results = await translate([{ id: 'e', source: '' }, { id: 'g', source: '\ufffd\u0007 \ufffd' }], config());
  assert.deepEqual(results.map((r) => [r.id, r.abstained, r.abstain_reason]),
    [['e', true, 'no word to translate'], ['g', true, 'no word to translate']]);
  const [result] = await translate([{ id: 'd', source: 'Good morning.' }], { ...config(), target_lang: 'deu' });
  assert.deepEqual([result.abstained, result.abstain_reason], [true, 'the glossary translates eng>spa, not eng>deu']);
});
