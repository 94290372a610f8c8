// References never reach a method from the Node host: startGuest (Node and Python guests) and
// loadMethodPlugin (translate.js in-process, a Python entry through mt-eval serve).
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { GOLD_FIELDS, loadMethodPlugin, methodView, startGuest } from '../index.js';
import { CONFIG, nodePackage, pythonGuest, repo } from './helpers/guests.js';

const vectors = JSON.parse(readFileSync(join(repo, 'bridge', 'vectors', 'gold-fields.json'), 'utf8'));
const peeking = join(repo, 'tests', 'fixtures', 'peeking');
const python = pythonGuest();
const ENTRY = { id: '1', source: 'Hi.', reference: 'Hola.', references: ['Hola.'], post_edit: 'Hola.', note: 'kept' };

test('the default gold fields are the shared vectors\'', () => {
  assert.deepEqual([...GOLD_FIELDS].sort(), [...vectors.default_gold_fields].sort());
});

for (const c of vectors.cases) {
  test(`methodView: ${c.name}`, () => {
    const entries = structuredClone(c.entries);
    assert.deepEqual(methodView(entries, c.gold_fields), c.expected);
    assert.deepEqual(entries, c.entries);
  });
}

const guests = [['Node', () => ({ command: [process.execPath, join(nodePackage, 'bin', 'mt-eval-guest.js'), peeking] })],
  ['Python', () => (python.skip ? { skip: python.skip } : { command: [python.command[0], 'serve', peeking] })]];

for (const [runtime, guest] of guests) {
  test(`startGuest never sends gold fields to a ${runtime} guest`, { skip: guest().skip }, async (t) => {
    const host = await startGuest(guest().command, { config: CONFIG, goldFields: ['post_edit'] });
    t.after(() => host.close());
    const [result] = await host.translate([ENTRY]);
    assert.equal(result.predicted, '(no reference)');
    assert.deepEqual(result.metadata.fields, ['id', 'note', 'source']);
  });
}

test('startGuest refuses goldFields that are not field names', async () => {
  await assert.rejects(startGuest(guests[0][1]().command, { goldFields: 'post_edit' }), /goldFields must be a list/);
});

test('loadMethodPlugin hides the gold from translate.js run in-process', async (t) => {
  const plugin = await loadMethodPlugin(peeking, { goldFields: ['post_edit'] });
  t.after(() => plugin.close());
  assert.equal(plugin.runtime, 'node');
  const [result] = await plugin.translate([ENTRY], CONFIG);
  assert.equal(result.predicted, '(no reference)');
  assert.deepEqual(result.metadata.fields, ['id', 'note', 'source']);
});

test('loadMethodPlugin hides the gold from a Python entry served over the bridge', { skip: python.skip }, async (t) => {
  const directory = mkdtempSync(join(tmpdir(), 'mt-eval-gold-'));
  t.after(() => rmSync(directory, { recursive: true, force: true }));
  cpSync(join(peeking, 'pipeline.py'), join(directory, 'pipeline.py'));
  writeFileSync(join(directory, 'method.json'), JSON.stringify({ name: 'Peeking', entry_point: 'pipeline:PeekingMethod' }));
  const plugin = await loadMethodPlugin(directory, { mtEval: python.command[0] });
  t.after(() => plugin.close());
  assert.equal(plugin.runtime, 'python');
  const [result] = await plugin.translate([ENTRY], CONFIG);
  assert.equal(result.predicted, ENTRY.post_edit, 'post_edit is not gold unless declared');
  assert.deepEqual(result.metadata.fields, ['id', 'note', 'post_edit', 'source']);
});
