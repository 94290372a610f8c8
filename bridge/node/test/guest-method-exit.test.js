// A method's process.exit() in the Node guest fails the request it was made in, and the guest serves on, as the Python
// guest turns a method's sys.exit() into -32007 (PROTOCOL.md, Lifecycle 5); the guest's own exit is its own.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { startGuest } from '../index.js';
import { CONFIG, nodeGuestCommand, recordingLogger } from './helpers/guests.js';

const METHOD = `export async function translate(entries) {
  if (entries.some((entry) => entry.source === 'exit')) process.exit(3);
  return entries.map((entry) => ({ id: entry.id, predicted: entry.source.toUpperCase() }));
}
`;

test('a method that calls process.exit() fails its entry in words, and the guest serves on', async () => {
  const directory = mkdtempSync(join(tmpdir(), 'mt-eval-exit-'));
  writeFileSync(join(directory, 'exits.js'), METHOD);
  const { logger, text } = recordingLogger();
  const guest = await startGuest([...nodeGuestCommand.slice(0, 2), '--module', join(directory, 'exits.js')],
    { config: CONFIG, logger, closeStepMs: 500 });
  try {
    const pid = guest.pid;
    const results = await guest.translate([{ id: 'a', source: 'one' }, { id: 'b', source: 'exit' }, { id: 'c', source: 'two' }]);
    assert.deepEqual(results.map((r) => [r.predicted, r.error]), [['ONE', null],
      [null, 'the method called process.exit(3): a translate.js returns its results or throws; it does not end the process'],
      ['TWO', null]]);
    assert.equal(guest.pid, pid, 'the guest was restarted');
    assert.equal(guest.restarts, 0, text());
  } finally {
    await guest.close();
  }
});
