// mt-eval-guest with methods that throw values that are not Errors (a Symbol, an object without a prototype, a
// BigInt) or wait on promises that nothing settles: each request is answered in words, and the guest neither dies
// nor ends quietly with requests unanswered.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { guestKit } from './helpers/guests.js';

const { moduleFile, guest } = guestKit();
const ECHO = 'export async function translate(entries) { return entries.map((e) => ({ id: e.id, predicted: e.source })); }\n';

test('a translate that throws a Symbol, an object without a prototype or a BigInt fails as thrown, in words', async () => {
  const file = moduleFile('throws.js', `export async function translate([entry]) {
  if (entry.source === 'symbol') throw Symbol('boom');
  if (entry.source === 'bare') throw Object.create(null);
  throw 10n;
}
`);
  const driver = guest(['--module', file]);
  await driver.initialize();
  const said = [];
  for (const [id, source] of [[1, 'symbol'], [2, 'bare'], [3, 'bigint']]) {
    driver.translate(id, [{ id: 'a', source }]);
    const { error } = await driver.next();
    said.push([error.code, error.message, error.data.type]);
  }
  assert.deepEqual(said, [[-32007, 'thrown: Symbol(boom)', 'thrown'], [-32007, 'thrown: an object', 'thrown'],
    [-32007, 'thrown: 10n', 'thrown']]); // (before: "the method's results cannot be sent: TypeError: Cannot convert …")
  assert.equal((await driver.close()).code, 0);
  assert.match(driver.stderr, /translate failed: Symbol\(boom\)/);
});

test('a Symbol thrown from a timer is logged and the guest serves on', async () => {
  const file = moduleFile('timer.js', `export async function translate(entries) {
  setTimeout(() => { throw Symbol('late'); }, 0);
  Promise.reject(Object.create(null));
  await new Promise((resolve) => { setTimeout(resolve, 50); });
  return entries.map((e) => ({ id: e.id, predicted: e.source }));
}
`);
  const driver = guest(['--module', file]);
  await driver.initialize();
  driver.translate(1, [{ id: 'a', source: 'x' }]);
  assert.deepEqual((await driver.next()).result.results.map((r) => r.predicted), ['x']); // (before: the guest died)
  assert.equal((await driver.close()).code, 0);
  assert.match(driver.stderr, /uncaught exception in the method: Symbol\(late\)/);
  assert.match(driver.stderr, /unhandled rejection in the method: an object/);
  assert.doesNotMatch(driver.stderr, /Cannot convert/);
});

test('a methodCard() that throws a Symbol fails initialize, naming what it threw', async () => {
  const file = moduleFile('card.js', `${ECHO}export function methodCard() { throw Symbol('card'); }\n`);
  const driver = guest(['--module', file]);
  const { error } = await driver.initialize();
  assert.equal(error.message.split('\n')[0], `cannot load the method: ${file} methodCard(): raised thrown: Symbol(card)`);
  assert.equal((await driver.close()).code, 1);
});

test('a module that throws an object without a prototype, or a BigInt, as it loads is named', async () => {
  for (const [name, thrown, said] of [['bare.js', 'Object.create(null)', 'thrown: an object'], ['big.js', '10n', 'thrown: 10n']]) {
    const driver = guest(['--module', moduleFile(name, `throw ${thrown};\n${ECHO}`)]);
    const { error } = await driver.initialize();
    assert.equal(error.message.split('\n')[0], `cannot load the method: ${said}`);
    assert.equal((await driver.close()).code, 1);
  }
});

test('stdin closed while a call waits on a promise nothing settles: it is cancelled, not left unanswered', async () => {
  const driver = guest(['--module', moduleFile('never.js', 'export function translate() { return new Promise(() => {}); }\n')]);
  await driver.initialize();
  driver.translate(1, [{ id: 'a', source: 'x' }]);
  const exited = await driver.close();
  assert.deepEqual(await driver.next(1000), { jsonrpc: '2.0', id: 1, error: { code: -32001, message: 'cancelled' } });
  assert.equal(exited.code, 0);
  assert.match(driver.stderr, /stdin closed while 1 request\(s\) wait on the method, which waits on a promise that nothing can settle: cancelled/);
});

test('stdin closed while a top-level await never settles: the guest says so and exits 1, not 0', async () => {
  const driver = guest(['--module', moduleFile('tla.js', `await new Promise(() => {});\n${ECHO}`)]);
  driver.send({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocol_versions: ['mt-eval-bridge/1'] } });
  const exited = await driver.close();
  assert.equal(exited.code, 1);
  assert.match(driver.stderr, /stdin closed while 1 request\(s\) wait on the method's module \(a top-level await\)/);
});

test('a module whose default export is the translate function says to export it by name', async () => {
  for (const [name, source] of [['whole.cjs', 'module.exports = async function translate() { return []; };\n'],
    ['default.mjs', 'export default async function translate() { return []; }\n']]) {
    const driver = guest(['--module', moduleFile(name, source)]);
    const { error } = await driver.initialize();
    // (before: only "does not export translate", of a module that exports nothing else)
    assert.match(error.message, /does not export translate \(its default export is the function translate: export it by the name translate\)/);
    await driver.close();
  }
});
