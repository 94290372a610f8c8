// The same entries through the Node guest and the Python guest (both serving the reverse
// fixture) give the same results, latency aside.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { loadMethodPlugin, startGuest } from '../index.js';
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

// A method's odd answer is worded the same in this process (loadMethodPlugin) and through either guest.
test('a method that returns a non-list, nulls or integer ids: the same error in process and through both guests, in each language\'s words', { skip: python.skip }, async (t) => {
  const directory = mkdtempSync(join(tmpdir(), 'parity-odd-'));
  t.after(() => rmSync(directory, { recursive: true, force: true }));
  const entries = [{ id: 'a', source: 'x' }, { id: 'b', source: 'y' }];
  const returns = { object: '{ a: 1 }', nulls: 'entries.map(() => null)', integers: 'entries.map((e, i) => ({ id: i, predicted: "p" }))' };
  const pythonReturns = { object: '{"a": 1}', nulls: '[None for _ in entries]', integers: '[{"id": i, "predicted": "p"} for i, _ in enumerate(entries)]' };
  for (const [kind, value] of Object.entries(returns)) {
    const plugin = join(directory, kind);
    mkdirSync(plugin);
    writeFileSync(join(plugin, 'method.json'), JSON.stringify({ name: kind, method_id: kind, node_entry: 'translate.js',
      entry_point: 'pipeline:M', dependencies: [] }));
    writeFileSync(join(plugin, 'translate.js'), `export async function translate(entries) { return ${value}; }\n`);
    writeFileSync(join(plugin, 'pipeline.py'), `class M:\n    async def translate(self, entries, config):\n        return ${pythonReturns[kind]}\n`);
    const warned = [[], [], []]; // what each host warns of: in process, through the Node guest, through the Python guest
    const loaded = await loadMethodPlugin(plugin, { config: CONFIG, logger: { warn: (text) => warned[0].push(text) } });
    const inProcess = (await loaded.translate(entries)).map((r) => r.error);
    await loaded.close();
    const errors = [];
    for (const [i, command] of [[...nodeGuestCommand.slice(0, -1), plugin], [...python.command.slice(0, -1), plugin]].entries()) {
      const guest = await startGuest(command, { config: CONFIG, logger: { warn: (text) => warned[i + 1].push(text) } });
      errors.push((await guest.translate(entries)).map((r) => r.error));
      await guest.close();
    }
    // (what is not a list is said in each language's words: a JavaScript object, a Python dict)
    const [nodeSaid, pythonSaid] = kind === 'object'
      ? ['the method returned an object, not a list of results: return an array of result objects, one per entry',
        'the method returned a dict, not a list of results: return a list of result dicts, one per entry']
      : Array(2).fill("the method returned no result for this entry, and results whose id matches no entry of the call (a result's id is its entry's id, a string)");
    assert.deepEqual([inProcess, ...errors], [[nodeSaid, nodeSaid], [nodeSaid, nodeSaid], [pythonSaid, pythonSaid]], kind);
    const strays = { object: [], nulls: ['2 items that are not an object, e.g. null'], integers: ['ids 0, 1'] }[kind]
      .map((which) => `the method returned results that match no entry it was sent (${which}); they were dropped (a result is {"id": entry["id"], "predicted": TEXT}, one per entry)`);
    assert.deepEqual(warned, [strays, strays, strays], kind);
  }
});

// A result whose metadata refers to itself (a kept HTTP response object often does) fails its entry alone, at once,
// in the same words in process and through both guests; the Node guest answered nothing (the call timed out).
test('a result that cannot be sent as JSON fails its entry alone, at once, in the same words everywhere', { skip: python.skip }, async (t) => {
  const plugin = mkdtempSync(join(tmpdir(), 'parity-circular-'));
  t.after(() => rmSync(plugin, { recursive: true, force: true }));
  writeFileSync(join(plugin, 'method.json'), JSON.stringify({ name: 'circular', method_id: 'circular', node_entry: 'translate.js',
    entry_point: 'pipeline:M', dependencies: [] }));
  writeFileSync(join(plugin, 'translate.js'), 'export async function translate(entries) {\n'
    + '  return entries.map((e) => { const response = { status: 200 }; if (e.source.includes("cycle")) response.self = response;\n'
    + '    return { id: e.id, predicted: e.source.toUpperCase(), metadata: { response } }; });\n}\n');
  writeFileSync(join(plugin, 'pipeline.py'), 'class M:\n    async def translate(self, entries, config):\n        out = []\n'
    + '        for e in entries:\n            response = {"status": 200}\n            if "cycle" in e["source"]:\n'
    + '                response["self"] = response\n'
    + '            out.append({"id": e["id"], "predicted": e["source"].upper(), "metadata": {"response": response}})\n'
    + '        return out\n');
  const entries = [{ id: 'a', source: 'one' }, { id: 'b', source: 'a cycle' }, { id: 'c', source: 'three' }];
  const expected = ['ONE', 'the method returned an unusable result: "metadata" cannot be sent as JSON: it refers to itself (a circular structure)', 'THREE'];
  const loaded = await loadMethodPlugin(plugin, { config: CONFIG });
  assert.deepEqual((await loaded.translate(entries)).map((r) => r.error ?? r.predicted), expected, 'in process');
  await loaded.close();
  for (const command of [[...nodeGuestCommand.slice(0, -1), plugin], [...python.command.slice(0, -1), plugin]]) {
    const guest = await startGuest(command, { config: CONFIG, logger: {}, requestTimeoutMs: 20_000 });
    const began = Date.now();
    assert.deepEqual((await guest.translate(entries)).map((r) => r.error ?? r.predicted), expected, command.join(' '));
    assert.ok(Date.now() - began < 5_000, `${Date.now() - began} ms: the answer did not come at once`);
    await guest.close();
  }
});
