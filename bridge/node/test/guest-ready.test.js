// mt-eval-guest before it is ready: every line read from initialize on (while the method loads, then the rules
// that check its answers) waits, and is handled in the order read once the guest is ready.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';

import { CONFIG, LineDriver, nodePackage, reverseFixture } from './helpers/guests.js';

const bin = join(nodePackage, 'bin', 'mt-eval-guest.js');
const drivers = [];
after(() => drivers.forEach((driver) => driver.kill()));

function guest(args) {
  const driver = new LineDriver([process.execPath, bin, ...args]);
  drivers.push(driver);
  return driver;
}

// initialize, then `lines` at once, before its answer; every answer, by id.
async function sentAtOnce(args, lines, count) {
  const driver = guest(args);
  driver.send({ jsonrpc: '2.0', id: 'init', method: 'initialize',
    params: { protocol_versions: ['mt-eval-bridge/0', 'mt-eval-bridge/1'], host: { name: 't', version: '1' }, config: CONFIG } });
  driver.sendRaw(lines.map((line) => `${JSON.stringify(line)}\n`).join(''));
  const answers = await driver.collect(count); // (answers may come in any order)
  driver.child.stdin.end();
  assert.deepEqual(await driver.exited, { code: 0, signal: null });
  assert.doesNotMatch(driver.stderr, /unhandled|TypeError/);
  return answers;
}

const translate = (id, source) => ({ jsonrpc: '2.0', id, method: 'translate', params: { entries: [{ id: 'a', source }], config: CONFIG } });
const predicted = (answer) => answer.result?.results?.[0].predicted;

test('requests sent before initialize is answered are all served after it', async () => {
  const answers = await sentAtOnce([reverseFixture], [translate(2, 'ab'), translate(3, 'cd'), translate(4, 'ef'),
    { jsonrpc: '2.0', id: 5, method: 'method_card', params: {} }], 5);
  assert.equal(answers.get('init').result.protocol_version, 'mt-eval-bridge/1');
  assert.deepEqual([2, 3, 4].map((id) => predicted(answers.get(id))), ['spa:ba', 'spa:dc', 'spa:fe']);
  assert.ok('card' in answers.get(5).result);
});

test('a shutdown does not overtake the requests sent before it, and refuses those after it', async () => {
  const answers = await sentAtOnce([reverseFixture], [translate(1, 'ab'), translate(2, '!sleep 100'),
    { jsonrpc: '2.0', id: 3, method: 'shutdown', params: {} }, translate(4, 'cd')], 5);
  assert.equal(predicted(answers.get(1)), 'spa:ba');
  assert.equal(predicted(answers.get(2)), 'spa:001 peels!');
  assert.equal(answers.get(3).result, null);
  assert.deepEqual(answers.get(4).error, { code: -32600, message: 'the guest is shutting down: no new requests' });
});

test('a cancel sent before initialize is answered finds its request; a second initialize is refused', async () => {
  const answers = await sentAtOnce([reverseFixture], [translate(1, '!sleep 5000'),
    { jsonrpc: '2.0', method: 'cancel', params: { id: 1 } }, translate(2, 'ab'),
    { jsonrpc: '2.0', id: 'again', method: 'initialize', params: { protocol_versions: ['mt-eval-bridge/1'] } }], 4);
  assert.deepEqual(answers.get(1).error, { code: -32001, message: 'cancelled' });
  assert.equal(predicted(answers.get(2)), 'spa:ba');
  assert.deepEqual(answers.get('again').error, { code: -32600, message: 'already initialized' });
});

test('when the method cannot load, each request that waited is told so', async () => {
  const broken = join(mkdtempSync(join(tmpdir(), 'mt-eval-guest-ready-')), 'broken.js');
  writeFileSync(broken, 'throw new Error("no weights");\n');
  const driver = guest(['--module', broken]);
  driver.send({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: { protocol_versions: ['mt-eval-bridge/1'], config: CONFIG } });
  driver.sendRaw(`${JSON.stringify(translate(1, 'ab'))}\n${JSON.stringify(translate(2, 'cd'))}\n`);
  const answers = await driver.collect(3);
  assert.match(answers.get('init').error.message, /cannot load the method: .*no weights/);
  for (const id of [1, 2]) {
    assert.deepEqual(answers.get(id).error, { code: -32006, message: 'not initialized: the method failed to load' });
  }
  driver.child.stdin.end();
  assert.equal((await driver.exited).code, 1);
});

test('--module naming a file Node cannot run says what to do instead (a Python file is served by mt-eval serve)', async () => {
  const directory = mkdtempSync(join(tmpdir(), 'mt-eval-guest-ready-'));
  for (const [name, fix] of [
    ['pipeline.py', /^cannot load the method: Unknown file extension "\.py" for .*pipeline\.py\n  fix: pipeline\.py is not a JavaScript module Node can load \(node_entry, or --module\): a Python method is named by entry_point in method\.json and served by `mt-eval serve`$/],
    ['translate.ts', /\n  fix: translate\.ts is not a JavaScript module Node can load \(node_entry, or --module\): compile it to JavaScript \(tsc\) and name the \.js file$/],
  ]) {
    writeFileSync(join(directory, name), 'x = 1\n');
    const driver = guest(['--module', join(directory, name)]);
    driver.send({ jsonrpc: '2.0', id: 'init', method: 'initialize', params: { protocol_versions: ['mt-eval-bridge/1'], config: CONFIG } });
    const answers = await driver.collect(1);
    assert.match(answers.get('init').error.message, fix);
    driver.child.stdin.end();
    assert.equal((await driver.exited).code, 1);
  }
});
