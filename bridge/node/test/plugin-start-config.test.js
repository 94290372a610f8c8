// What the declarations say of a plugin's start(), a guest's calls and a loaded module is what they do: a plugin
// that decides starts with the config decide() takes (no language pair), whatever its runtime; a guest's
// translate() and decide() take null as no config; loadMethod() gives the module's file.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { loadMethod, loadMethodPlugin, resolveMethod, startGuest } from '../index.js';
import { CONFIG, guestBin, nodeGuestCommand, reverseFixture } from './helpers/guests.js';

const ROW = { id: 'r1', state: {}, questions: { q: { type: 'noul', instructions: 'Is it fine?' } } };

/** A plugin directory whose method (the reverse fixture) runs as a bridge command: through a guest. */
function commandPlugin(t, implemented = ['translate', 'decide']) {
  const directory = mkdtempSync(join(tmpdir(), 'plugin-start-'));
  t.after(() => rmSync(directory, { recursive: true, force: true }));
  writeFileSync(join(directory, 'method.json'), JSON.stringify({
    name: 'Reverse as a command', method_id: 'reverse-command', class: 'custom-plugin',
    command: [process.execPath, guestBin, reverseFixture], implements: implemented,
    dependency_class: 'S', dependencies: [],
  }));
  return directory;
}

for (const [runtime, plugin] of [['node', () => reverseFixture], ['command', (t) => commandPlugin(t)]]) {
  test(`a ${runtime} plugin that decides starts with a config without the language pair, as decide() takes it`, async (t) => {
    const loaded = await loadMethodPlugin(plugin(t), { config: { batch_size: 4 } });
    t.after(() => loaded.close());
    assert.equal(loaded.runtime, runtime);
    await loaded.start(); // (its options.config)
    await loaded.start({ batch_size: 2 });
    const [decided] = await loaded.decide([ROW]);
    assert.equal(decided.error, null);
    assert.deepEqual(decided.answers.q.probabilities, { true: 0.5, false: 0.5 });
  });
}

test('a plugin that only translates still refuses to start with a config without the language pair', async (t) => {
  const loaded = await loadMethodPlugin(commandPlugin(t, ['translate']));
  t.after(() => loaded.close());
  await assert.rejects(loaded.start({ batch_size: 2 }), { name: 'TypeError', message: /source_lang/ });
});

test("a guest's translate() and decide() take a null config as none: the start's is used", async (t) => {
  const guest = await startGuest(nodeGuestCommand, { config: CONFIG });
  t.after(() => guest.close());
  const [result] = await guest.translate([{ id: '1', source: 'abc' }], null);
  assert.equal(result.predicted, 'spa:cba');
  const [decided] = await guest.decide([ROW], null);
  assert.equal(decided.error, null);
});

test('loadMethod() gives the file of the module it imported', async () => {
  const loaded = await loadMethod(resolveMethod({ directory: reverseFixture }));
  assert.equal(loaded.file, join(reverseFixture, 'translate.js'));
});
