// A translate answer's shared latency (PROTOCOL.md, "Results"): the Node host asks for it at initialize, gives
// the answer's latency_s to each result at 0, and every result ends with its latency, whichever guest answered.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { startGuest } from '../index.js';
import { matchResults } from '../lib/results.js';
import { CONFIG, nodeGuestCommand, pythonGuest, repo } from './helpers/guests.js';

const RECORDER = `
const readline = require('node:readline');
readline.createInterface({ input: process.stdin }).on('line', (line) => {
  const request = JSON.parse(line);
  if (request.method !== 'initialize') return;
  const result = { protocol_version: 'mt-eval-bridge/1', method: { name: 'Recorder', method_id: 'recorder' },
    card: { initialize: request.params }, capabilities: {} };
  process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: request.id, result }) + '\\n');
});
`;
const entries = [{ id: 'a', source: 'x' }, { id: 'b', source: 'y' }];

describe('the host', () => {
  test('asks for shared latency at initialize', async () => {
    const guest = await startGuest([process.execPath, '-e', RECORDER], { config: CONFIG, closeStepMs: 200 });
    try {
      assert.equal(guest.info.card.initialize.shared_latency, true);
    } finally {
      await guest.close();
    }
  });

  test("gives the answer's latency_s to each result without one of its own, in any order", () => {
    const matched = matchResults(entries, [{ id: 'b', predicted: 'Y', latency_s: 2 }, { id: 'a', predicted: 'X' }],
      { latencyS: 0.25 });
    assert.deepEqual(matched.map((r) => [r.id, r.latency_s]), [['a', 0.25], ['b', 2]]);
    const upstream = matchResults(entries, [{ id: 'a', predicted: 'X', latency_s: null }, { id: 'b', predicted: 'Y', extra: 1 }],
      { latencyS: 0.5 });
    assert.deepEqual(upstream.map((r) => r.latency_s), [0.5, 0.5]);
  });

  for (const latencyS of [-1, '0.5', true, null, 0, Infinity, undefined]) {
    test(`ignores an answer latency_s of ${String(latencyS)}`, () => {
      const matched = matchResults(entries, [{ id: 'a', predicted: 'X' }, { id: 'b', predicted: 'Y' }], { latencyS });
      assert.deepEqual(matched.map((r) => [r.predicted, r.latency_s]), [['X', 0], ['Y', 0]]);
    });
  }
});

describe('through startGuest, every result has its latency', () => {
  const guests = { node: { command: nodeGuestCommand }, python: pythonGuest() };
  for (const [runtime, { command, skip }] of Object.entries(guests)) {
    test(`from the ${runtime} guest`, { skip }, async () => {
      const guest = await startGuest(command, { config: CONFIG, cwd: repo, closeStepMs: 500 });
      try {
        const results = await guest.translate([0, 1, 2, 3].map((i) => ({ id: `e${i}`, source: `text ${i}` })), CONFIG);
        assert.equal(results.filter((r) => r.error === null).length, 4, JSON.stringify(results));
        const latencies = new Set(results.map((r) => r.latency_s));
        assert.equal(latencies.size, 1);
        assert.ok([...latencies][0] > 0, `latencies: ${[...latencies]}`);
      } finally {
        await guest.close();
      }
    });
  }
});
