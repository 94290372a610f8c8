// translateLocales as an API: its options are checked before anything is read, and a progress callback that throws
// costs nothing translated.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { translateLocales } from '../index.js';
import { makeProject } from './helpers/champollion.js';

const project = () => makeProject({
  config: { version: 3, inputLocale: 'en', pairs: { 'en:es': { methodPlugin: 'upper', batchSize: 1 } } },
  files: { 'locales/en/common.json': { a: 'One', b: 'Two', c: 'Three' } }, plugins: ['upper'],
});

test('an unknown or mistyped option is a TypeError naming it, before anything is read or sent', async (t) => {
  const p = project();
  t.after(p.cleanup);
  for (const [args, said] of [
    [[p.root, { locales: 'es' }], /^options\.locales must be a list of target locales \(strings\), got "es"$/],
    [[p.root, { wait: Number.NaN }], /^options\.wait must be a number of seconds, 0 or more \(Infinity: no limit\), got NaN$/],
    [[p.root, { wait: 'soon' }], /^options\.wait must be .*, got "soon"$/],
    [[p.root, { signal: 'x' }], /^options\.signal must be an AbortSignal, got "x"$/],
    [[p.root, { progress: 5 }], /^options\.progress must be a function \(locale, done, total\), got 5$/],
    [[p.root, { dryRun: 'yes' }], /^options\.dryRun must be true or false, got "yes"$/],
    [[p.root, { closeTimeoutS: -1 }], /^options\.closeTimeoutS must be a number of seconds above 0, got -1$/],
    [[p.root, { progres() {} }], /^options\.progres is not an option of translateLocales; the options are locales, dryRun/],
    [[p.root, 'opts'], /^options must be an object, got "opts"$/],
    [[123], /^the config must be a path \(a string\)/],
  ]) {
    await assert.rejects(translateLocales(...args), (error) => error instanceof TypeError && said.test(error.message));
  }
  assert.deepEqual(p.calls(), []);
});

test('a progress callback that throws is not called again, and the run goes on: its files are written, then it is thrown', async (t) => {
  const p = project();
  t.after(p.cleanup);
  let calls = 0;
  const error = await translateLocales(p.root, { progress: () => { calls += 1; throw new Error('UI glitch'); } })
    .then(() => null, (e) => e);
  assert.equal(error?.message, 'UI glitch');
  assert.equal(error.kind, 'progress');
  assert.equal(calls, 1);
  assert.deepEqual(error.report.locales[0].files[0].translated.sort(), ['a', 'b', 'c']);
  assert.deepEqual(p.json('locales/es/common.json'), { a: 'spa: ONE', b: 'spa: TWO', c: 'spa: THREE' });
  assert.equal((await translateLocales(p.root)).locales[0].sent, 0); // (recorded in the lock file too)
});
