// A Node method declares how many calls it takes at once (`export const capabilities = { max_concurrency: N }`):
// its guest declares that at initialize and runs no more, whoever hosts it (startGuest, loadMethodPlugin in this
// process); a value that is not a whole number from 1 is refused when the method loads, naming the field.
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { loadMethodPlugin, startGuest } from '../index.js';
import { CONFIG, guestBin, guestKit, recordingLogger, repo } from './helpers/guests.js';

const { moduleFile, guest, scratch } = guestKit();

// Counts its calls in flight: each result says the most seen so far.
const counting = (capabilities) => `
let active = 0, peak = 0;
export const capabilities = ${capabilities};
export async function translate(entries) {
  peak = Math.max(peak, ++active);
  await new Promise((resolve) => setTimeout(resolve, 40));
  active--;
  return entries.map((e) => ({ id: e.id, predicted: e.source, metadata: { peak } }));
}
`;
const TWO_AT_ONCE = counting('{ max_concurrency: 2 }');
const peakOf = (results) => Math.max(...results.map((result) => result.metadata.peak));
const entries = (count) => Array.from({ length: count }, (_, i) => ({ id: `e${i}`, source: `s${i}` }));

function plugin(name, source) {
  const directory = join(scratch, name);
  mkdirSync(directory);
  writeFileSync(join(directory, 'method.json'), JSON.stringify({
    name, method_id: name, node_entry: 'translate.js', supported_pairs: ['eng>spa'], dependency_class: 'S',
    dependencies: [],
  }));
  writeFileSync(join(directory, 'translate.js'), source);
  return directory;
}

test('the guest declares the method\'s max_concurrency and runs no more of its calls at once', async () => {
  const driver = guest(['--module', moduleFile('two.js', TWO_AT_ONCE)]);
  const { result } = await driver.initialize();
  assert.equal(result.capabilities.max_concurrency, 2);
  assert.equal(result.capabilities.cancel, true); // (the rest is the guest's own)
  for (let i = 0; i < 8; i++) driver.translate(i, [{ id: `e${i}`, source: 'x' }]);
  const answers = await driver.collect(8);
  assert.equal(Math.max(...[...answers.values()].map((m) => m.result.results[0].metadata.peak)), 2);
  assert.deepEqual(await driver.close(), { code: 0, signal: null });
});

test('a method without capabilities keeps the guest\'s 64', async () => {
  const driver = guest(['--module', moduleFile('plain.js', 'export const translate = async (entries) => entries;\n')]);
  assert.equal((await driver.initialize()).result.capabilities.max_concurrency, 64);
  await driver.close();
});

const FIX = 'fix: export `capabilities = { max_concurrency: N }`, N the calls the method takes at once: a whole number '
  + 'from 1 (without it, 64)';

test('a max_concurrency that is not a whole number from 1 is refused at initialize, naming the field', async () => {
  for (const [name, declared, said] of [
    ['zero.js', '{ max_concurrency: 0 }', 'capabilities.max_concurrency = the number 0'],
    ['negative.js', '{ max_concurrency: -2 }', 'capabilities.max_concurrency = the number -2'],
    ['fraction.js', '{ max_concurrency: 1.5 }', 'capabilities.max_concurrency = the number 1.5'],
    ['text.js', "{ max_concurrency: '2' }", 'capabilities.max_concurrency = the string "2"'],
    ['null.js', '{ max_concurrency: null }', 'capabilities.max_concurrency = null'],
  ]) {
    const file = moduleFile(name, counting(declared));
    const driver = guest(['--module', file]);
    const { error } = await driver.initialize();
    assert.equal(error?.message, `cannot load the method: ${file} exports ${said}: it must be a whole number of `
      + `calls from 1\n  ${FIX}`, name);
    assert.equal((await driver.close()).code, 1);
  }
});

test('capabilities that are not an object, or a field a method does not declare, are refused too', async () => {
  for (const [name, declared, said] of [
    ['number.js', '2', 'exports capabilities as the number 2, not an object'],
    ['batch.js', '{ max_batch: 4 }', 'exports capabilities.max_batch, which a method does not declare (it declares '
      + 'max_concurrency)'],
  ]) {
    const file = moduleFile(name, counting(declared));
    const driver = guest(['--module', file]);
    const { error } = await driver.initialize();
    assert.equal(error?.message, `cannot load the method: ${file} ${said}\n  ${FIX}`, name);
    await driver.close();
  }
});

test('startGuest sends a Node guest no more than its method\'s max_concurrency', async () => {
  const { logger } = recordingLogger();
  const hosted = await startGuest([process.execPath, guestBin, '--module', moduleFile('hosted.js', TWO_AT_ONCE)],
    { config: CONFIG, cwd: repo, logger, batchSize: 1, closeStepMs: 500 });
  try {
    assert.equal(hosted.capabilities.max_concurrency, 2);
    const results = await hosted.translate(entries(12));
    assert.deepEqual(results.map((r) => r.predicted), entries(12).map((e) => e.source));
    assert.equal(peakOf(results), 2);
  } finally {
    await hosted.close();
  }
});

test('loadMethodPlugin runs an in-process method no more than its max_concurrency, even across calls', async (t) => {
  const method = await loadMethodPlugin(plugin('in-process', TWO_AT_ONCE), { watchdog: false });
  t.after(() => method.close());
  const config = { source_lang: 'eng', target_lang: 'spa', batch_size: 1, concurrency: 16 };
  const [first, second] = await Promise.all([method.translate(entries(10), config), method.translate(entries(6), config)]);
  assert.deepEqual(first.map((r) => r.error), Array(10).fill(null));
  assert.equal(peakOf([...first, ...second]), 2);
});

test('loadMethodPlugin refuses a bad max_concurrency when the plugin starts', async (t) => {
  const method = await loadMethodPlugin(plugin('bad-count', counting('{ max_concurrency: 0 }')), { watchdog: false });
  t.after(() => method.close());
  await assert.rejects(method.start(), /translate\.js exports capabilities\.max_concurrency = the number 0: it must be /);
});
