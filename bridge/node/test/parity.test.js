// The same entries through the Node guest and the Python guest (both serving the reverse
// fixture) give the same results, latency aside.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { startGuest } from '../index.js';
import { CONFIG, isRunning, nodeGuestCommand, pythonGuest, repo } from './helpers/guests.js';

const python = pythonGuest();

const ENTRIES = [
  { id: 'a', source: 'abc' },
  { id: 'b', source: 'Hello number 0.' },
  { id: 'c', source: '!fail x' },
  { id: 'd', source: '!print' },
  { id: 'é-1', source: 'Line one\nline two\ttab' },
  { id: '日本', source: 'Ça va? ¿Qué tal?' },
  { id: '🙂', source: 'smile 🙂 \u2028 separator' },
  { id: 'e', source: '' },
  { id: 'f', source: '!sleep 20', reference: 'extra fields pass through', domain: 'chat' },
];

async function translateWith(command, batches) {
  const guest = await startGuest(command, { config: CONFIG, cwd: repo, logger: {} });
  try {
    const out = [];
    for (const entries of batches) out.push(await guest.translate(entries));
    return { results: out, info: guest.info };
  } finally {
    const pid = guest.pid;
    await guest.close();
    assert.equal(isRunning(pid), false);
  }
}

const withoutLatency = (results) => results.map((batch) => batch.map(({ latency_s: _, ...rest }) => rest));

test('Node and Python guests give identical results (latency aside)', { skip: python.skip }, async () => {
  const batches = [ENTRIES, [{ id: 'r1', source: 'ok' }, { id: 'r2', source: '!raise' }]];
  const [node, py] = await Promise.all([translateWith(nodeGuestCommand, batches), translateWith(python.command, batches)]);
  assert.deepEqual(withoutLatency(node.results)[0], withoutLatency(py.results)[0]);
  assert.equal(node.results[0][0].predicted, 'spa:cba');
  // A raising method fails only the entry that raises on both sides (the host splits the request); the
  // exception's wording differs.
  for (const [ok, raised] of [node.results[1], py.results[1]]) {
    assert.equal(ok.predicted, 'spa:ko');
    assert.equal(raised.predicted, null);
    assert.match(raised.error, /^the method failed: \w+: asked to raise$/);
  }
  assert.equal(node.info.method.method_id, py.info.method.method_id);
});
