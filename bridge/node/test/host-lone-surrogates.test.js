// Text that is not valid Unicode (a lone surrogate) fails its entry before anything is sent, in the words the shared
// vectors give (bridge/vectors/contract/lone-surrogates.json), whichever guest or in-process plugin would have got it:
// the input is blamed, not the method's result; the other entries go on, and nothing waits for a deadline.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { loadMethodPlugin, startGuest } from '../index.js';
import { failureMessage } from '../lib/guest-requests.js';
import { problemIn, wellFormedJson, writable } from '../lib/lone-surrogates.js';
import { PLUGINS } from './helpers/champollion.js';
import { CONFIG, nodeGuestCommand, pythonGuest, recordingLogger, repo } from './helpers/guests.js';

const vectors = JSON.parse(readFileSync(join(repo, 'bridge', 'vectors', 'contract', 'lone-surrogates.json'), 'utf8')).cases;
const python = pythonGuest();
const TEXT = 'the text is not valid Unicode (surrogates not allowed at position 1)';

test('the problem is worded as the vectors say, as Python words it', () => {
  for (const c of vectors) assert.equal(problemIn(c.value, c.owner), c.problem, c.name);
});

test('what a method says about itself is made writable: each lone surrogate as its escape, as Python does', () => {
  assert.equal(writable('caf\udce9, x\ud800 \u{1f600} é'), 'caf\\udce9, x\\ud800 \u{1f600} é');
  assert.equal(writable('fine'), 'fine');
  assert.equal(failureMessage(new Error('cannot read caf\udce9')), 'Error: cannot read caf\\udce9');
});

test('what a guest writes is well-formed: a lone surrogate JSON.stringify escaped becomes U+FFFD, nothing else changes', () => {
  for (const [value, written] of [
    [{ message: 'Error: cannot read \ud83d here' }, '{"message":"Error: cannot read \ufffd here"}'],
    [{ ['k\udc00']: '\\\ud800', pair: '🙂' }, '{"k\ufffd":"\\\\\ufffd","pair":"🙂"}'],
    [{ literal: '\\ud800 is six characters' }, '{"literal":"\\\\ud800 is six characters"}'],
  ]) {
    const text = wellFormedJson(JSON.stringify(value));
    assert.equal(text, written);
    assert.ok(text.isWellFormed());
  }
});

for (const [runtime, command, skip] of [['Python', python.command, python.skip], ['Node', nodeGuestCommand, false]]) {
  test(`a ${runtime} guest: the entry fails at once, the others are translated`, { skip }, async () => {
    const { logger, text } = recordingLogger();
    const guest = await startGuest(command, { config: CONFIG, cwd: repo, logger, requestTimeoutMs: 60_000 });
    try {
      const began = Date.now();
      const results = await guest.translate([{ id: 'a', source: 'x\ud800y' }, { id: 'b', source: 'abc' },
        { id: 'c', source: 'fine', note: 'n\udc00' }]);
      assert.ok(Date.now() - began < 5_000, `took ${Date.now() - began} ms`);
      assert.deepEqual(results.map((r) => r.error), [TEXT, null,
        'the entry\'s "note" is not valid Unicode (surrogates not allowed at position 1)']);
      assert.equal(results[1].predicted, 'spa:cba');
      const config = await guest.translate([{ id: 'b', source: 'abc' }], { ...CONFIG, model: '\ud800' });
      assert.equal(config[0].error, 'the config\'s "model" is not valid Unicode (surrogates not allowed at position 0)');
      const question = { fluent: { type: 'noul', instructions: 'Fluent?' } };
      const rows = await guest.decide([{ id: 'r1', state: { text: 'x\ud800' }, questions: question },
        { id: 'r2', state: {}, questions: question }]);
      assert.equal(rows[0].error, 'the row\'s "state.text" is not valid Unicode (surrogates not allowed at position 1)');
      assert.equal(rows[1].error, null);
      assert.equal(guest.restarts, 0);
      assert.doesNotMatch(text(), /names no request in flight|timed out/);
    } finally {
      await guest.close();
    }
  });
}

test('a translate.js run in this process is not handed the text either: the input is blamed, not the result', async () => {
  const plugin = await loadMethodPlugin(PLUGINS.upper, { config: CONFIG });
  try {
    const results = await plugin.translate([{ id: 'a', source: 'x\ud800y' }, { id: 'b', source: 'hi' }]);
    assert.deepEqual(results.map((r) => [r.predicted, r.error]), [[null, TEXT], ['spa: HI', null]]);
  } finally {
    await plugin.close();
  }
});
