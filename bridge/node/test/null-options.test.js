// Every option of startGuest, loadMethodPlugin and translateLocales may be null, the same as leaving it out, as
// their declarations say (a host passing `value ?? null` compiles, and gets the default).
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { loadMethodPlugin, readChampollionConfig, startGuest, translateLocales } from '../index.js';
import { makeProject } from './helpers/champollion.js';
import { CONFIG, nodeGuestCommand, reverseFixture } from './helpers/guests.js';

/** Each option named by the TypeError an unknown option gets, set to null. */
async function everyOptionNull(call) {
  const refused = await Promise.resolve().then(() => call({ notAnOption: 1 })).then(() => null, (error) => error);
  assert.ok(refused instanceof TypeError, String(refused));
  const names = refused.message.match(/the options are (.+)$/)[1].split(', ');
  assert.ok(names.length > 5, refused.message);
  return Object.fromEntries(names.map((name) => [name, null]));
}

test('startGuest takes null for every option, and for each field of restartBudget', async (t) => {
  const options = await everyOptionNull((given) => startGuest(nodeGuestCommand, given));
  const guest = await startGuest(nodeGuestCommand, { ...options, restartBudget: { restarts: null, windowMs: null } });
  t.after(() => guest.close());
  const [result] = await guest.translate([{ id: '1', source: 'abc' }], CONFIG);
  assert.equal(result.predicted, 'spa:cba');
});

test('loadMethodPlugin takes null for every option: translate() still hides the gold, decide() keeps the default tolerance', async (t) => {
  const options = await everyOptionNull((given) => loadMethodPlugin(reverseFixture, given));
  const plugin = await loadMethodPlugin(reverseFixture, options);
  t.after(() => plugin.close());
  const [result] = await plugin.translate([{ id: '1', source: 'abc', reference: 'cba' }], CONFIG);
  assert.equal(result.error, null);
  assert.equal(result.predicted, 'spa:cba');
  // 0.7 and three times 0.3 / 3 sum to 0.9999999999999999: within the default tolerance (1e-3), not within none
  const question = { type: 'choice', instructions: 'Which?', options: ['a', 'b', 'c', 'd'] };
  const [decided] = await plugin.decide([{ id: 'r1', state: { prefer: 'a' }, questions: { q: question } }]);
  assert.equal(decided.error, null);
  const rest = 0.3 / 3;
  assert.deepEqual(decided.answers.q, { probabilities: { a: 0.7, b: rest, c: rest, d: rest } });
});

test('translateLocales takes null for every option, and readChampollionConfig a null path', async (t) => {
  const project = makeProject({
    config: { version: 3, inputLocale: 'en', pairs: { 'en:es': { methodPlugin: 'upper' } } }, plugins: ['upper'],
    files: { 'locales/en.json': { a: 'A' } },
  });
  t.after(project.cleanup);
  const options = await everyOptionNull((given) => translateLocales(project.root, given));
  const report = await translateLocales(project.root, options);
  assert.deepEqual(report.locales[0].files[0].translated, ['a']);
  assert.equal(project.json('locales/es.json').a, 'spa: A');
  const cwd = process.cwd();
  process.chdir(project.root);
  try {
    assert.equal(readChampollionConfig(null).inputLocale, 'en');
  } finally {
    process.chdir(cwd);
  }
});
