// A method's error message of any length is kept at MESSAGE_LIMIT characters, its start and how much was cut, in the
// same words as mt_eval.lone_surrogates.capped (tests/test_long_messages.py pins the same texts): in this process
// (loadMethodPlugin) and through either guest, for a thrown error and for an error the method returns.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { loadMethodPlugin, startGuest } from '../index.js';
import { failureMessage, thrownText } from '../lib/guest-requests.js';
import { methodFailure } from '../lib/host-failures.js';
import { MESSAGE_LIMIT, capped } from '../lib/lone-surrogates.js';
import { CONFIG, nodeGuestCommand, pythonGuest } from './helpers/guests.js';

const python = pythonGuest();
const LONG = 1_000_000;
const SAID = 'the method failed: RuntimeError: ';

test('capped keeps the start, says what was cut, counts code points and cuts nothing twice, as Python does', () => {
  assert.equal(capped('short'), 'short');
  assert.equal(capped('z'.repeat(MESSAGE_LIMIT)), 'z'.repeat(MESSAGE_LIMIT));
  const long = capped('é'.repeat(10_000_000));
  assert.equal(long, `${'é'.repeat(MESSAGE_LIMIT - 40)}… (9,998,040 characters more)`);
  assert.equal(capped(long), long);
  assert.equal(capped('🙂'.repeat(MESSAGE_LIMIT)), '🙂'.repeat(MESSAGE_LIMIT)); // (a pair is one character)
  assert.equal(capped(SAID + capped('x'.repeat(LONG))), `${SAID}${'x'.repeat(MESSAGE_LIMIT - 40 - SAID.length)}… (998,073 characters more)`);
  assert.equal(capped(SAID + capped('x'.repeat(LONG))), capped(SAID + 'x'.repeat(LONG)));
});

test('a thrown error is capped in its failure, in a host\'s words for it and in the log line that shows its stack', () => {
  const error = new RangeError('x'.repeat(LONG));
  assert.equal(failureMessage(error), capped(`RangeError: ${'x'.repeat(LONG)}`));
  assert.equal(methodFailure('x'.repeat(LONG), 'RangeError'), capped(`the method failed: RangeError: ${'x'.repeat(LONG)}`));
  const logged = thrownText(error);
  assert.ok(logged.startsWith(capped(`RangeError: ${'x'.repeat(LONG)}`)) && logged.length < 2 * MESSAGE_LIMIT, logged.slice(-300));
  assert.match(logged, /characters more\)\n {4}at /);
});

test('a long thrown or returned error is kept alike in process and through the Node and the Python guest', { skip: python.skip }, async (t) => {
  const directory = mkdtempSync(join(tmpdir(), 'long-messages-'));
  t.after(() => rmSync(directory, { recursive: true, force: true }));
  writeFileSync(join(directory, 'method.json'), JSON.stringify({ name: 'long', method_id: 'long', node_entry: 'translate.js',
    entry_point: 'pipeline:M', dependencies: [] }));
  writeFileSync(join(directory, 'translate.js'), `class RuntimeError extends Error { name = 'RuntimeError'; }
export async function translate(entries) {
  if (entries[0].source === 'raise') throw new RuntimeError('x'.repeat(${LONG}));
  return [{ id: entries[0].id, error: 'y'.repeat(${LONG}) }];
}\n`);
  writeFileSync(join(directory, 'pipeline.py'), `class M:
    async def translate(self, entries, config):
        if entries[0]["source"] == "raise":
            raise RuntimeError("x" * ${LONG})
        return [{"id": entries[0]["id"], "error": "y" * ${LONG}}]\n`);
  const expected = [capped(`${SAID}${'x'.repeat(LONG)}`), capped('y'.repeat(LONG))];
  const entries = [{ id: 'a', source: 'raise' }, { id: 'b', source: 'return' }];
  const loaded = await loadMethodPlugin(directory, { config: CONFIG });
  const inProcess = [];
  for (const entry of entries) inProcess.push(...(await loaded.translate([entry])).map((r) => r.error));
  await loaded.close();
  assert.deepEqual(inProcess, expected, 'in process');
  for (const command of [[...nodeGuestCommand.slice(0, -1), directory], [...python.command.slice(0, -1), directory]]) {
    const guest = await startGuest(command, { config: CONFIG, logger: {} });
    const errors = [];
    for (const entry of entries) errors.push(...(await guest.translate([entry])).map((r) => r.error));
    await guest.close();
    assert.deepEqual(errors, expected, command.join(' '));
  }
});
