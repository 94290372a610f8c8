// A method whose translate returns something other than an array (a generator, an iterator, a Map, a Set) is told
// what it returned and how to return an array instead: in this process (loadMethodPlugin) and through the Node guest.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { loadMethodPlugin, startGuest } from '../index.js';
import { CONFIG, nodeGuestCommand } from './helpers/guests.js';

const RETURNS = {
  'function* results(entries) { for (const e of entries) yield { id: e.id, predicted: e.source }; }\nreturn results(entries);':
    'the method returned a generator, not a list of results: return an array, e.g. [...results] or Array.from(...)',
  'return entries.map((e) => ({ id: e.id, predicted: e.source })).values();':
    'the method returned an iterator, not a list of results: return an array, e.g. [...results] or Array.from(...)',
  'return new Map(entries.map((e) => [e.id, { predicted: e.source }]));':
    'the method returned a Map, not a list of results: return an array of result objects, one per entry',
  'return new Set(entries.map((e) => ({ id: e.id, predicted: e.source })));':
    'the method returned a Set, not a list of results: return an array, e.g. [...set]',
};

test('a method that returns no array is told what it returned and how to return one, in process and as a guest', async (t) => {
  const directory = mkdtempSync(join(tmpdir(), 'not-a-list-'));
  t.after(() => rmSync(directory, { recursive: true, force: true }));
  const entries = [{ id: 'a', source: 'x' }];
  for (const [i, [body, said]] of Object.entries(RETURNS).entries()) {
    const plugin = join(directory, String(i)); // (one directory each: a module once imported stays as it was)
    mkdirSync(plugin);
    writeFileSync(join(plugin, 'method.json'), JSON.stringify({ name: 'n', method_id: 'n', node_entry: 'translate.js', dependencies: [] }));
    writeFileSync(join(plugin, 'translate.js'), `export async function translate(entries) {\n${body}\n}\n`);
    const loaded = await loadMethodPlugin(plugin, { config: CONFIG, logger: {} });
    const inProcess = (await loaded.translate(entries)).map((r) => r.error);
    await loaded.close();
    const guest = await startGuest([...nodeGuestCommand.slice(0, -1), plugin], { config: CONFIG, logger: {} });
    const throughGuest = (await guest.translate(entries)).map((r) => r.error);
    await guest.close();
    assert.deepEqual([inProcess, throughGuest], [[said], [said]], said);
  }
});
