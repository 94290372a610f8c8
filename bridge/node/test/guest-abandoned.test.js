// mt-eval-guest and calls its host cancelled that the method never returns from: each keeps its slot only
// MT_EVAL_GUEST_SETTLE_MS (then it is abandoned, and said once), and too many abandoned calls end the guest.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { guestKit, waitFor } from './helpers/guests.js';
import { settleMilliseconds } from '../lib/guest-slots.js';

const { moduleFile, guest } = guestKit();

// "hang" never settles and ignores its signal; "heed" settles once its signal is aborted; anything else echoes.
const HANGING = `export async function translate(entries, config, { signal } = {}) {
  if (entries[0].source === 'hang') await new Promise(() => {});
  if (entries[0].source === 'heed') await new Promise((resolve) => signal.addEventListener('abort', resolve));
  return entries.map((e) => ({ id: e.id, predicted: e.source }));
}
`;
const exitedWithin = async (driver, ms) => {
  let timer;
  const exited = await Promise.race([driver.exited, new Promise((resolve) => { timer = setTimeout(resolve, ms, null); })]);
  clearTimeout(timer);
  return exited;
};
const cancel = (id) => ({ jsonrpc: '2.0', method: 'cancel', params: { id } });
const started = (settleMs) => guest(['--module', moduleFile('hanging.js', HANGING)],
  { env: { ...process.env, MT_EVAL_GUEST_SETTLE_MS: String(settleMs) } });
const abandonedLines = (driver) => driver.stderr.split('\n').filter((line) => line.includes(' was cancelled '));

// Sends `count` calls that never settle (ids from `first`), cancels each, and reads the cancel answers.
async function hangAndCancel(driver, first, count) {
  for (let id = first; id < first + count; id++) driver.translate(id, [{ id: 'e', source: 'hang' }]);
  for (let id = first; id < first + count; id++) driver.send(cancel(id));
  const answers = await driver.collect(count);
  assert.ok([...answers.values()].every((answer) => answer.error?.code === -32001));
}

describe('cancelled calls that never settle', () => {
  test('each gives its slot to the next request once the grace is over, and stderr says so once per call', async () => {
    const driver = started(200);
    await driver.initialize();
    driver.translate('heeds', [{ id: 'e', source: 'heed' }]);
    driver.send(cancel('heeds'));
    assert.equal((await driver.next()).error.code, -32001);
    const began = Date.now();
    await hangAndCancel(driver, 0, 64); // every slot held by a call the method never returns from
    driver.translate('next', [{ id: 'e', source: 'hello' }]);
    // (before: queued until its host timed it out)
    assert.equal((await driver.next(5000)).result.results[0].predicted, 'hello');
    assert.ok(Date.now() - began >= 190, 'a slot is given only once the grace is over');
    assert.ok(await waitFor(() => abandonedLines(driver).length === 64));
    assert.ok(abandonedLines(driver).every((line) => line.startsWith('mt-eval-guest: translate request ')), driver.stderr);
    assert.equal(abandonedLines(driver)[63], 'mt-eval-guest: translate request 63 was cancelled 0.2 s ago and the method '
      + 'has not returned from it (it does not heed its {signal}, or waits on a promise nothing settles): its slot is '
      + `given to the next request, and what it returns is dropped (64 calls abandoned; at 128 the guest `
      + 'exits so that its host starts a fresh one)');
    assert.doesNotMatch(driver.stderr, /"heeds"/); // (a call that settles when cancelled keeps its slot until then)
    assert.deepEqual(await driver.close(), { code: 0, signal: null });
  });

  test('at 128 abandoned calls (twice the 64 it runs at once) the guest says why and exits 1, for its host to start a fresh one', async () => {
    const driver = started(50);
    await driver.initialize();
    await hangAndCancel(driver, 0, 64);
    assert.ok(await waitFor(() => abandonedLines(driver).length === 64));
    driver.translate('alive', [{ id: 'e', source: 'still served' }]);
    assert.equal((await driver.next()).result.results[0].predicted, 'still served');
    await hangAndCancel(driver, 64, 64);
    assert.deepEqual(await exitedWithin(driver, 5000), { code: 1, signal: null }, driver.stderr.slice(-2000)); // (before: it served on, slots all held)
    assert.equal(abandonedLines(driver).length, 127);
    assert.match(driver.stderr, /\nmt-eval-guest: 128 cancelled calls of the method have not returned, translate request 127 the last \(cancelled 0\.05 s ago\): the method does not stop a call when it is cancelled, and what those calls hold is never given back\. Exiting, so that the host starts a fresh guest\. Fix: make translate\(\) and decide\(\) return \(or throw\) once the signal of their third argument \(\{signal\}\) is aborted\n$/);
  });

  test('for a method that declares max_concurrency 2, the guest exits at 4 abandoned calls', async () => {
    const file = moduleFile('two-hanging.js', `${HANGING}export const capabilities = { max_concurrency: 2 };\n`);
    const driver = guest(['--module', file], { env: { ...process.env, MT_EVAL_GUEST_SETTLE_MS: '50' } });
    assert.equal((await driver.initialize()).result.capabilities.max_concurrency, 2);
    await hangAndCancel(driver, 0, 2); // (a third would wait in the queue, and leave it when cancelled)
    assert.ok(await waitFor(() => abandonedLines(driver).length === 2));
    assert.match(abandonedLines(driver)[1], /\(2 calls abandoned; at 4 the guest exits so that its host starts a fresh one\)$/);
    driver.translate('alive', [{ id: 'e', source: 'still served' }]);
    assert.equal((await driver.next()).result.results[0].predicted, 'still served');
    await hangAndCancel(driver, 2, 2);
    // (before: it served on until 128 had been abandoned, 64 times its method's slots)
    assert.deepEqual(await exitedWithin(driver, 5000), { code: 1, signal: null }, driver.stderr.slice(-2000));
    assert.match(driver.stderr, /\nmt-eval-guest: 4 cancelled calls of the method have not returned, translate request 3 the last \(cancelled 0\.05 s ago\)/);
  });

  test('a call that settles after it was abandoned is no longer counted, and gives no slot twice', async () => {
    // "held" returns once a "release" call came; others after their source's milliseconds. Each says how many calls
    // were running as it started, itself included.
    const file = moduleFile('late.js', `let running = 0;
let release;
const released = new Promise((resolve) => { release = resolve; });
export async function translate(entries) {
  const { source } = entries[0];
  if (source === 'release') release();
  const along = ++running;
  await (source === 'held' ? released : new Promise((resolve) => { setTimeout(resolve, Number(source)); }));
  running--;
  return entries.map((e) => ({ id: e.id, predicted: String(along) }));
}
`);
    const driver = guest(['--module', file], { env: { ...process.env, MT_EVAL_GUEST_SETTLE_MS: '50' } });
    await driver.initialize();
    for (let id = 0; id < 64; id++) driver.translate(id, [{ id: 'e', source: 'held' }]);
    for (let id = 0; id < 64; id++) driver.send(cancel(id));
    await driver.collect(64);
    // 64 abandoned calls still running, and 64 more given their slots once the grace is over.
    for (let id = 64; id < 128; id++) driver.translate(id, [{ id: 'e', source: '200' }]);
    const along = async (count) => [...(await driver.collect(count)).values()].map((answer) => Number(answer.result.results[0].predicted));
    assert.equal(Math.max(...await along(64)), 128);
    driver.translate('release', [{ id: 'e', source: 'release' }]); // (the abandoned calls return before its answer is written)
    await driver.next();
    // Once the abandoned calls have returned, never more than 64 at once again: none gave its slot twice.
    for (let id = 128; id < 196; id++) driver.translate(id, [{ id: 'e', source: '100' }]);
    assert.equal(Math.max(...await along(68)), 64);
    assert.equal(abandonedLines(driver).length, 64);
    assert.deepEqual(await driver.close(), { code: 0, signal: null });
  });

  test('MT_EVAL_GUEST_SETTLE_MS is a number of milliseconds, 5,000 when unset', () => {
    assert.equal(settleMilliseconds({}), 5000);
    assert.equal(settleMilliseconds({ MT_EVAL_GUEST_SETTLE_MS: ' 250 ' }), 250);
    assert.equal(settleMilliseconds({ MT_EVAL_GUEST_SETTLE_MS: '99999999999' }), 2 ** 31 - 1);
    for (const given of ['-1', '1.5', 'soon']) {
      assert.throws(() => settleMilliseconds({ MT_EVAL_GUEST_SETTLE_MS: given }),
        new RegExp(`^Error: MT_EVAL_GUEST_SETTLE_MS=${JSON.stringify(given).replace('.', '\\.')} is not a number of milliseconds`));
    }
  });
});
