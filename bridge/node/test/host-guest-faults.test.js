// The Node host against a config every entry shares and a guest that closes its input: each is one failure, found
// at once, not one found entry by entry or at a request's deadline (as tests/test_bridge_guest_faults.py for the
// Python host); a config given to a call that does not fit is refused before anything is sent. And an in-process
// call's deadline beyond setTimeout's longest delay.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';

import { startGuest } from '../index.js';
import { callIsolating } from '../lib/calls.js';
import { Connection } from '../lib/connection.js';
import { EncodedParams } from '../lib/protocol.js';
import { CONFIG, isRunning, nodeGuestCommand, pythonGuest, recordingLogger, repo } from './helpers/guests.js';

const entries = (...sources) => sources.map((source, i) => ({ id: `e${i}`, source }));
const started = new Set();
after(async () => { await Promise.all([...started].map((guest) => guest.close())); });

async function start(command, options = {}) {
  const { logger, text } = recordingLogger();
  const guest = await startGuest(command, { cwd: repo, logger, closeStepMs: 500, ...options });
  started.add(guest);
  return Object.assign(guest, { logText: text });
}

// How many entries (or rows) each translate (or decide) request carried, as the host sent them.
function countingRequests(t, kind = 'translate') {
  const sent = [];
  const request = Connection.prototype.request;
  Connection.prototype.request = function counted(method, params, options) {
    const key = kind === 'decide' ? 'rows' : 'entries';
    if (method === kind) sent.push((params instanceof EncodedParams ? JSON.parse(params.text) : params)[key].length);
    return request.call(this, method, params, options);
  };
  t.after(() => { Connection.prototype.request = request; });
  return sent;
}

const python = pythonGuest();
for (const [runtime, command, skip] of [['Node', nodeGuestCommand], ['Python', python.command, python.skip]]) {
  test(`a ${runtime} guest's invalid config fails every entry at once with its message, in one request`, { skip }, async (t) => {
    const sent = countingRequests(t);
    // (a guest that decides starts with a config without the language pair, which it refuses to translate with)
    const guest = await start(command, { config: { temperature: 0 } });
    const results = await guest.translate(entries(...'abcdefgh'));
    const errors = new Set(results.map((result) => result.error));
    assert.equal(errors.size, 1, JSON.stringify(results));
    assert.match([...errors][0], /^invalid config: \$\.source_lang: /);
    assert.deepEqual(results.map((result) => result.predicted), Array(8).fill(null));
    assert.deepEqual(sent, [8]); // one request, not 15 (the batch halved down to single entries)
    assert.equal(guest.restarts, 0);
    assert.deepEqual((await guest.translate(entries('ab'), CONFIG)).map((result) => result.predicted), ['spa:ba']);
    await guest.close();
  });
}

const rows = [{ id: 'r1', state: {}, questions: { n: { type: 'noul', instructions: '?' } } }];
const notRunConfigs = [
  [{ ...CONFIG, source_lang: 5 }, 'invalid config: $.source_lang: expected a string, got the number 5'],
  [{ ...CONFIG, target_lang: '' }, 'invalid config: $.target_lang: "" is not a language code'],
  [{ ...CONFIG, temprature: 0.3 }, 'invalid config: $.temprature: unknown field "temprature"'],
  [{ ...CONFIG, timeout_s: -1 }, 'invalid config: $.timeout_s: must be > 0, got -1'],
  ['eng-spa', 'invalid config: expected an object, got the string "eng-spa"'],
  [[CONFIG], 'invalid config: expected an object, got an array'],
];

test('a config given to translate() or decide() that does not fit is refused as at the start, unsent, and the guest serves on', async (t) => {
  const translates = countingRequests(t);
  const decides = countingRequests(t, 'decide');
  const guest = await start(nodeGuestCommand, { config: CONFIG });
  const pid = guest.pid;
  const withoutPair = [{ temperature: 0 }, 'invalid config: $.source_lang: required field "source_lang" is missing'];
  for (const [config, message] of [...notRunConfigs, withoutPair]) {
    await assert.rejects(guest.translate(entries('ab', 'cd'), config), (error) => {
      assert.ok(error instanceof TypeError, `${JSON.stringify(config)}: ${error}`);
      assert.equal(error.message, message);
      return true;
    });
  }
  for (const [config, message] of notRunConfigs) {
    await assert.rejects(guest.decide(rows, config), { name: 'TypeError', message });
  }
  assert.deepEqual([translates, decides], [[], []]); // nothing sent
  assert.equal(guest.pid, pid);
  assert.equal(guest.restarts, 0);
  // the same guest takes a config that fits, given or its own
  assert.deepEqual((await guest.translate(entries('ab'), { ...CONFIG, temperature: 0 })).map((r) => r.predicted), ['spa:ba']);
  assert.deepEqual((await guest.translate(entries('cd'))).map((r) => r.predicted), ['spa:dc']);
  assert.equal((await guest.decide(rows, { temperature: 0 }))[0].error, null);
  assert.deepEqual([translates, decides, guest.pid], [[1, 1], [1], pid]);
  await guest.close();
});

test('translate() with no config, given neither at the start nor to the call, is refused unsent', async (t) => {
  const translates = countingRequests(t);
  const guest = await start(nodeGuestCommand);
  const message = 'translate needs a RunConfig: pass config, or options.config to startGuest';
  await assert.rejects(guest.translate(entries('ab')), { name: 'TypeError', message });
  await assert.rejects(guest.translate(entries('ab'), null), { name: 'TypeError', message });
  assert.deepEqual(translates, []);
  assert.deepEqual((await guest.translate(entries('ab'), CONFIG)).map((r) => r.predicted), ['spa:ba']);
  await guest.close();
});

// Reads initialize, closes its stdin (fd 0 itself: destroying process.stdin leaves it open), answers, and keeps
// running (it never exits on its own).
const CLOSES_ITS_INPUT = `
import { closeSync, readSync, writeSync } from 'node:fs';
const buffer = Buffer.alloc(65536);
let text = '';
while (!text.includes('\\n')) text += buffer.toString('utf8', 0, readSync(0, buffer));
closeSync(0);
const request = JSON.parse(text.split('\\n')[0]);
const result = { protocol_version: 'mt-eval-bridge/1', method: { name: 'closes', method_id: 'closes' }, capabilities: { cancel: true } };
writeSync(1, JSON.stringify({ jsonrpc: '2.0', id: request.id, result }) + '\\n');
writeSync(2, 'closed my stdin\\n');
setInterval(() => {}, 60_000);
`;

test('a guest that closes its input is gone once a request cannot be written, and is replaced', async (t) => {
  const scratch = mkdtempSync(join(tmpdir(), 'mt-eval-host-'));
  t.after(() => rmSync(scratch, { recursive: true, force: true }));
  const file = join(scratch, 'closes-its-input.mjs');
  writeFileSync(file, CLOSES_ITS_INPUT);
  const guest = await start([process.execPath, file], {
    config: CONFIG, requestTimeoutMs: 5000, restartBudget: { restarts: 2, windowMs: 60_000 },
  });
  const first = guest.pid;
  const began = Date.now();
  const results = await guest.translate(entries('a', 'b'));
  assert.ok(Date.now() - began < 4000, `took ${Date.now() - began} ms`); // not the 5 s request timeout, nor one per entry
  assert.deepEqual(results.map((result) => result.predicted), [null, null]);
  for (const result of results) assert.match(result.error, /^the guest was stopped: it closed its input \(stdin\)/);
  assert.equal(isRunning(first), false);
  // a guest that never completed a request is charged to the crash-loop budget, as one that exited
  const [exhausted] = await guest.translate(entries('c'));
  assert.match(exhausted.error, /the guest's crash-loop budget is exhausted \(2 restarts within 60 s\); it last failed: the guest was stopped: it closed its input \(stdin\)/);
  assert.equal(guest.restarts, 2);
  await guest.close();
});

test('an in-process call\'s deadline beyond setTimeout\'s longest delay waits, rather than firing at once', async () => {
  const warnings = [];
  const onWarning = (warning) => warnings.push(warning.name);
  process.on('warning', onWarning);
  try {
    const invoke = async (items) => {
      await new Promise((resolve) => { setTimeout(resolve, 50); });
      return items.map((item) => ({ id: item.id, predicted: item.source }));
    };
    const results = await callIsolating(invoke, entries('a', 'b'), {
      timeoutS: 3e6, // 3e9 ms an entry, over 2^31 - 1 even alone
      match: (items, returned) => returned,
      fail: (id, error) => ({ id, error }),
    });
    assert.deepEqual(results, [{ id: 'e0', predicted: 'a' }, { id: 'e1', predicted: 'b' }]);
    await new Promise((resolve) => { setImmediate(resolve); });
    assert.deepEqual(warnings, []);
  } finally {
    process.off('warning', onWarning);
  }
});

// Crashes on a request of several entries; refuses the config of any other (as a guest restarted with a config it
// cannot take would).
const CRASHES_THEN_REFUSES_THE_CONFIG = `
import { createInterface } from 'node:readline';
for await (const line of createInterface({ input: process.stdin })) {
  const request = JSON.parse(line);
  if (request.id === undefined) continue; // (a notification)
  let answer = { result: null };
  if (request.method === 'initialize') {
    answer = { result: { protocol_version: 'mt-eval-bridge/1', method: { name: 'refuses', method_id: 'refuses' }, capabilities: {} } };
  } else if (request.method === 'translate' && request.params.entries.length > 1) {
    process.exit(3);
  } else if (request.method === 'translate') {
    answer = { error: { code: -32602, message: 'invalid config: $.seed: expected an integer' } };
  }
  process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: request.id, ...answer }) + '\\n');
}
`;

test('a config refused while entries are sent alone after a crash fails the others at once, unsent', async (t) => {
  const scratch = mkdtempSync(join(tmpdir(), 'mt-eval-host-'));
  t.after(() => rmSync(scratch, { recursive: true, force: true }));
  const file = join(scratch, 'crashes-then-refuses.mjs');
  writeFileSync(file, CRASHES_THEN_REFUSES_THE_CONFIG);
  const sent = countingRequests(t);
  const guest = await start([process.execPath, file], { config: CONFIG, restartBudget: { restarts: 2, windowMs: 60_000 } });
  const results = await guest.translate(entries(...'abcdef'));
  assert.deepEqual(results.map((result) => result.error), Array(6).fill('invalid config: $.seed: expected an integer'));
  assert.deepEqual(sent, [6, 1]); // (before: [6, 1, 1, 1, 1, 1, 1], each alone failing alike)
  assert.equal(guest.restarts, 1);
  await guest.close();
});
