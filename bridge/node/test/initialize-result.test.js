// index.d.ts against what the host returns: a guest's initialize result is typed as the protocol lets a guest send it
// (card, capabilities, guest and implements may be left out), and HostedGuest.capabilities has every field filled in.
// (What index.d.ts says of them is compiled in test/types/consumer.ts.)
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { startGuest } from '../index.js';
import { CONFIG } from './helpers/guests.js';

// A guest that answers initialize with only what the protocol requires.
const MINIMAL_GUEST = `
import { createInterface } from 'node:readline';
const answer = (id, result) => process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id, result }) + '\\n');
for await (const line of createInterface({ input: process.stdin })) {
  const message = JSON.parse(line);
  if (message.method === 'initialize') answer(message.id, { protocol_version: 'mt-eval-bridge/1', method: { name: 'Minimal', method_id: 'minimal' } });
  else if (message.method === 'translate') answer(message.id, { results: message.params.entries.map((e) => ({ id: e.id, predicted: e.source })) });
  else if (message.method === 'shutdown') { answer(message.id, null); break; }
}
`;

test('a guest that leaves card, capabilities, guest and implements out of initialize: info has none of them', async () => {
  const directory = mkdtempSync(join(tmpdir(), 'mt-eval-types-'));
  writeFileSync(join(directory, 'guest.mjs'), MINIMAL_GUEST);
  const guest = await startGuest([process.execPath, join(directory, 'guest.mjs')], { config: CONFIG, closeStepMs: 500 });
  try {
    assert.deepEqual(guest.info, { protocol_version: 'mt-eval-bridge/1', method: { name: 'Minimal', method_id: 'minimal' } });
    assert.deepEqual(guest.capabilities, { max_batch: null, max_concurrency: 1, cancel: false, progress: false });
  } finally {
    await guest.close();
    rmSync(directory, { recursive: true, force: true });
  }
});
