// loadMethodPlugin refuses what the Python SDK refuses (the same messages), and methodCard() returns the merged
// card — method.json, method_card.json, then what the method reports when it runs — as the Python harness does.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { ManifestError, loadMethodPlugin } from '../index.js';
import { pythonGuest } from './helpers/guests.js';

const python = pythonGuest();
const root = mkdtempSync(join(tmpdir(), 'mt-eval-card-'));
let count = 0;

function plugin(files) {
  const directory = join(root, `plugin-${count++}`);
  mkdirSync(directory);
  for (const [name, content] of Object.entries(files)) {
    writeFileSync(join(directory, name), typeof content === 'string' ? content : JSON.stringify(content));
  }
  return directory;
}

const manifest = (extra = {}) => ({ name: 'Carded', node_entry: 'translate.js', dependencies: [], dependency_class: 'S', ...extra });
const translateJs = (card) => `export async function translate(entries) { return entries.map((e) => ({ id: e.id, predicted: e.source })); }
export function methodCard() { return ${card}; }\n`;

test('methodCard() merges method.json, method_card.json and the method\'s own card', async () => {
  const directory = plugin({ 'method.json': manifest({ version: '2.0' }), 'method_card.json': { description: 'from the file', paradigm: 'llm' },
    'translate.js': translateJs('{ paradigm: "rule-based", tools_used: ["glossary"] }') });
  const method = await loadMethodPlugin(directory);
  assert.deepEqual(await method.methodCard(), { method_id: directory.split('/').pop(), name: 'Carded', class: 'custom-plugin',
    version: '2.0', description: 'from the file', paradigm: 'rule-based', dependency_class: 'S', tools_used: ['glossary'] });
  await method.close();
});

test('a plugin with a method_card.json and no methodCard() gets the file\'s card, not null', async () => {
  const directory = plugin({ 'method.json': manifest(), 'method_card.json': { description: 'only the file' },
    'translate.js': 'export async function translate() { return []; }\n' });
  const method = await loadMethodPlugin(directory);
  assert.equal((await method.methodCard()).description, 'only the file');
  await method.close();
});

test('a method card that contradicts method.json is refused, naming where it came from', async () => {
  const directory = plugin({ 'method.json': manifest(), 'translate.js': translateJs('{ dependency_class: "X" }') });
  const method = await loadMethodPlugin(directory);
  await assert.rejects(method.methodCard(), (error) => {
    assert.ok(error instanceof ManifestError);
    assert.match(error.message, /error: translate\.js methodCard\(\) \$\.dependency_class: says "X" but .*method\.json says "S"/);
    return true;
  });
  await method.close();
});

test('plugins Python refuses are refused before anything runs: invalid class, contradicting class, invalid card', async () => {
  const cases = [
    [{ 'method.json': manifest({ class: 'llm' }) }, /\$\.class: the string "llm" is not a valid method class/],
    [{ 'method.json': manifest({ dependencies: [{ id: 'api', kind: 'service', license: 'proprietary', access: 'external-api',
      source: 'https://api.example.org', redistributable: false, transferable: false }] }) },
    /\$\.dependency_class: declared "S" but the dependencies make it "A2"/],
    [{ 'method.json': manifest(), 'method_card.json': { open_source: 'yes' } }, /method_card\.json \$\.open_source: expected true or false/],
  ];
  for (const [files, pattern] of cases) {
    const directory = plugin({ 'translate.js': translateJs('null'), ...files });
    await assert.rejects(loadMethodPlugin(directory), (error) => error instanceof ManifestError && pattern.test(error.message));
  }
});

test('the card of a Python plugin served over the bridge is merged too', { skip: python.skip }, async () => {
  const directory = plugin({ 'method.json': { name: 'Carded', entry_point: 'pipeline:Carded', dependencies: [], dependency_class: 'S' },
    'method_card.json': { description: 'from the file' },
    'pipeline.py': 'class Carded:\n    async def translate(self, entries, config):\n        return []\n\n'
      + '    def method_card(self):\n        return {"paradigm": "statistical"}\n' });
  const method = await loadMethodPlugin(directory, { mtEval: python.command[0] });
  const card = await method.methodCard();
  assert.equal(card.paradigm, 'statistical');
  assert.equal(card.description, 'from the file');
  await method.close();
});

test('a methodCard() that throws is named with its file, what it threw and the fix, as Python names method_card()', async () => {
  const directory = plugin({ 'method.json': manifest(), 'translate.js': translateJs('(() => { throw new Error("card boom"); })()') });
  const method = await loadMethodPlugin(directory);
  await assert.rejects(method.methodCard(), (error) => {
    assert.ok(error instanceof ManifestError);
    assert.equal(error.file, 'translate.js methodCard()');
    assert.match(error.message, /error: translate\.js methodCard\(\): raised Error: card boom \(translate\.js:2\)/);
    assert.equal(error.hint, 'make methodCard() return an object of card fields');
    return true;
  });
  await method.close();
});

test('the Node guest refuses to start a method whose methodCard() throws or returns a list, saying why', async () => {
  const { startGuest } = await import('../index.js');
  for (const [card, said] of [['(() => { throw new Error("card boom"); })()', /methodCard\(\): raised Error: card boom \(translate\.js:2\)\n {2}fix: make methodCard\(\) return an object of card fields/],
    ['[1]', /methodCard\(\): a method card must be an object, got list\n {2}fix: return or write a JSON object/]]) {
    const directory = plugin({ 'method.json': manifest(), 'translate.js': translateJs(card) });
    await assert.rejects(startGuest([process.execPath, new URL('../bin/mt-eval-guest.js', import.meta.url).pathname, directory]),
      (error) => { assert.match(error.message, said); return true; });
  }
});
