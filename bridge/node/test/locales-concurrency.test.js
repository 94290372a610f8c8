// mt-eval-locales calls a method no more often at once than it takes (its capabilities.max_concurrency), as Python's
// mt-eval locales does: the locale's batches in flight, and the strings of a batch that timed out, sent alone.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { translateLocales } from '../lib/champollion/sync.js';
import { makeProject } from './helpers/champollion.js';

// Each call is written down as it starts and as it ends; one whose strings say "hang" waits until it is abandoned.
const METHOD = `import { appendFileSync } from 'node:fs';
export const name = 'Counted';
CAPABILITIES
export async function translate(entries, config, { signal }) {
  const say = (event) => appendFileSync(LOG, JSON.stringify([event, entries.map((e) => e.id)]) + '\\n');
  say('start');
  try {
    if (entries.some((e) => e.source.includes('hang'))) {
      await new Promise((resolve) => { signal.addEventListener('abort', resolve, { once: true }); });
    } else {
      await new Promise((resolve) => { setTimeout(resolve, 20); });
    }
    return entries.map((e) => ({ id: e.id, predicted: e.source.toUpperCase() }));
  } finally {
    say('end');
  }
}
`;

/** A project whose en:es method is METHOD, declaring maxConcurrency (undefined: nothing declared). */
function project(t, maxConcurrency, pair, strings) {
  const made = makeProject({
    config: { version: 3, inputLocale: 'en', pairs: { 'en:es': { methodPlugin: 'counted', ...pair } } },
    files: { 'locales/en.json': strings, '.champollion/methods/counted/method.json': {
      name: 'Counted', method_id: 'counted', node_entry: 'translate.js', dependency_class: 'S',
      dependencies: [],
    } },
    plugins: [],
  });
  t.after(made.cleanup);
  const capabilities = maxConcurrency === undefined ? '' : `export const capabilities = { max_concurrency: ${maxConcurrency} };`;
  made.write('.champollion/methods/counted/translate.js', METHOD.replace('CAPABILITIES', capabilities)
    .replace('LOG', JSON.stringify(made.log)));
  return made;
}

/** The calls made, in the order they started ([ids]), and the most in flight at once (of those that pass keep). */
function callsOf(log, keep = () => true) {
  let running = 0;
  let most = 0;
  const started = [];
  for (const [event, ids] of readFileSync(log, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line))) {
    if (!keep(ids)) continue;
    if (event === 'start') started.push(ids);
    running += event === 'start' ? 1 : -1;
    most = Math.max(most, running);
  }
  return { started, most };
}

for (const [maxConcurrency, atOnce] of [[undefined, 4], [2, 2], [1, 1]]) {
  test(`the batches of a locale are sent ${atOnce} at once to a method taking ${maxConcurrency ?? 'any number'}`, async (t) => {
    const strings = Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`k${i}`, `Sentence ${i}.`]));
    const made = project(t, maxConcurrency, { batchSize: 1 }, strings);
    const report = await translateLocales(made.root, {});
    assert.deepEqual(report.locales.map((locale) => locale.sent), [12]);
    const { started, most } = callsOf(made.log);
    assert.equal(started.length, 12);
    assert.equal(most, atOnce);
  });

  test(`the strings of a batch that timed out are sent alone, ${atOnce} at once, to a method taking ${maxConcurrency ?? 'any number'}`, async (t) => {
    // (before: one after another whatever the method takes)
    const strings = Object.fromEntries(Array.from({ length: 4 }, (_, i) => [`k${i}`, `hang ${i}`]));
    const made = project(t, maxConcurrency, { batchSize: 4, timeoutS: 0.2 }, strings);
    const report = await translateLocales(made.root, {});
    assert.deepEqual(report.locales.map((locale) => locale.sent), [4]);
    const { started } = callsOf(made.log);
    assert.equal(started[0].length, 4); // the batch, then each string alone
    assert.deepEqual(started.slice(1).map((ids) => ids.length), [1, 1, 1, 1]);
    assert.equal(callsOf(made.log, (ids) => ids.length === 1).most, atOnce);
  });
}
