// The Node host against the Node guest on the reverse fixture, and against guests that break the
// protocol on purpose (test/guests/misbehaving.js). Every test closes its guest and checks that no
// process it started is left running.
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';

import { startGuest } from '../index.js';
import { fieldNames } from '../lib/contract/schema.js';
import { CONFIG, isRunning, nodeGuestCommand, recordingLogger, repo, testGuest, waitFor } from './helpers/guests.js';

const misbehaving = (mode) => [process.execPath, testGuest('misbehaving.js'), mode];
const entries = (...sources) => sources.map((source, i) => ({ id: `e${i}`, source }));
const started = new Set();

// Start a guest, remember it for the final cleanup check.
async function start(command, options = {}) {
  const { logger, records, text } = recordingLogger();
  const guest = await startGuest(command, { config: CONFIG, cwd: repo, logger, closeStepMs: 500, ...options });
  started.add(guest);
  return Object.assign(guest, { records, logText: text });
}

// Close within a bounded time and assert the guest process is gone.
async function closeAndCheck(guest, { withinMs = 5000 } = {}) {
  const pid = guest.pid;
  const began = Date.now();
  await guest.close();
  assert.ok(Date.now() - began < withinMs, `close took ${Date.now() - began} ms`);
  assert.equal(isRunning(pid), false, `guest ${pid} still running after close()`);
}

const ok = (result, predicted) => {
  assert.equal(result.error, null, `unexpected error: ${result.error}`);
  assert.equal(result.predicted, predicted);
};
const failed = (result, pattern) => {
  assert.equal(result.predicted, null);
  assert.match(result.error ?? '', pattern);
};

after(async () => {
  await Promise.all([...started].map((guest) => guest.close()));
});

describe('host with the Node guest on the reverse fixture', () => {
  test('translates, one full result per entry in entry order', async () => {
    const guest = await start(nodeGuestCommand);
    assert.equal(guest.info.protocol_version, 'mt-eval-bridge/1');
    // method.json's name, as the Python guest serves it (the module's own `name` export names a bare module only)
    assert.deepEqual(guest.info.method, { name: 'Reverse (bridge reference method)', method_id: 'reverse' });
    assert.deepEqual(guest.capabilities, { max_batch: null, max_concurrency: 64, cancel: true, progress: false });
    const results = await guest.translate([
      { id: 'a', source: 'abc' }, { id: 'b', source: '!fail x' }, { id: 'c', source: 'Héllo 🙂\nwörld' },
    ], { source_lang: 'eng', target_lang: 'spa' });
    assert.deepEqual(results.map((r) => r.id), ['a', 'b', 'c']);
    ok(results[0], 'spa:cba');
    failed(results[1], /^asked to fail$/);
    ok(results[2], 'spa:dlröw\n🙂 olléH');
    for (const result of results) {
      assert.deepEqual(Object.keys(result), fieldNames('translation-result'));
      assert.deepEqual(result.usage, { prompt_tokens: 0, completion_tokens: 0, total_tokens: null });
      assert.ok(result.latency_s >= 0);
    }
    assert.deepEqual(await guest.translate([]), []);
    await assert.rejects(guest.translate([{ id: 'a' }]), /entries\[0\].source must be a string, got null/);
    await assert.rejects(guest.translate(entries('x', 'y').map((e) => ({ ...e, id: 'same' }))),
      /entries\[1\].id "same" appears twice in the request/);
    await assert.rejects(guest.translate(entries('x', 'y').map((e) => ({ ...e, id: 'a"b\\c' }))),
      { name: 'TypeError', message: 'entries[1].id "a\\"b\\\\c" appears twice in the request' }); // the id JSON-quoted
    assert.deepEqual(await guest.methodCard(), { paradigm: 'unknown' });
    await closeAndCheck(guest);
    await assert.rejects(guest.translate(entries('abc')), /the guest is closed/);
    await assert.rejects(guest.translate([{ id: 'a' }]), /the guest is closed/);
  });

  test('entries in no shape a guest takes are refused in the words a guest refuses them with, params. aside', async () => {
    // (the Python host's words for the same entries: tests/test_bridge_answers.py)
    const guest = await start(nodeGuestCommand);
    const refusals = [
      [[{ source: 'x' }], 'entries[0].id must be a non-empty string, got null'],
      ['abc', 'entries must be a list of entries, got the string "abc"'],
      [null, 'entries must be a list of entries, got null'],
      [[{ id: 'a', source: 'x' }, 5], 'entries[1] must be an object, got the number 5'],
      [[{ id: 1, source: 'x' }], 'entries[0].id must be a non-empty string, got the number 1'],
      [[{ id: 'a', source: 5 }], 'entries[0].source must be a string, got the number 5'],
    ];
    for (const [given, said] of refusals) {
      await assert.rejects(guest.translate(given), { name: 'TypeError', message: said });
    }
    ok((await guest.translate(entries('abc')))[0], 'spa:cba'); // (and the guest serves on)
    await closeAndCheck(guest);
  });

  test('"!raise" fails only its own entry: the request is split until the entry is found', async () => {
    const guest = await start(nodeGuestCommand, { batchSize: 2 });
    const results = await guest.translate(entries('one', 'two', '!raise', 'three', 'four'));
    ok(results[0], 'spa:eno');
    ok(results[1], 'spa:owt');
    failed(results[2], /^the method failed: Error: asked to raise$/);
    ok(results[3], 'spa:eerht');
    ok(results[4], 'spa:ruof');
    await closeAndCheck(guest);
  });

  test('"!print" goes to stderr, not into the protocol stream', async () => {
    const guest = await start(nodeGuestCommand);
    const results = await guest.translate(entries('!print', 'abc'));
    ok(results[0], 'spa:tnirp!');
    ok(results[1], 'spa:cba');
    assert.ok(await waitFor(() => guest.stderrTail.includes('this line must not reach the protocol stream')));
    assert.doesNotMatch(guest.logText(), /not a JSON object/);
    assert.match(guest.logText(), /info: \[guest \d+\] this line must not reach/);
    await closeAndCheck(guest);
  });

  test('batches run concurrently up to the guest\'s max_concurrency', async () => {
    const guest = await start(nodeGuestCommand, { batchSize: 1 });
    const began = Date.now();
    const results = await guest.translate(Array.from({ length: 80 }, (_, i) => ({ id: `s${i}`, source: '!sleep 300' })));
    const elapsed = Date.now() - began;
    assert.equal(results.length, 80);
    for (const result of results) ok(result, 'spa:003 peels!');
    // 80 requests of 300 ms, 64 at a time: two rounds, far less than 80 in a row.
    assert.ok(elapsed >= 550 && elapsed < 4000, `took ${elapsed} ms`);
    await closeAndCheck(guest);
  });
});

describe('host batching follows the guest\'s capabilities', () => {
  test('max_batch and max_concurrency are respected', async () => {
    const guest = await start(misbehaving('concurrency'));
    const results = await guest.translate(entries(...Array.from({ length: 14 }, (_, i) => `s${i}`)));
    results.forEach((result, i) => ok(result, `spa:${[...`s${i}`].reverse().join('')}`));
    assert.ok(results.every((r) => r.metadata.batch_size <= 3));
    assert.deepEqual(results.map((r) => r.metadata.batch_size), [3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 2, 2]);
    assert.equal(Math.max(...results.map((r) => r.metadata.max_in_flight)), 2);
    await closeAndCheck(guest);
  });
});

describe('host failure semantics', () => {
  test('a crash mid-batch fails that request; earlier results stay and the guest restarts', async () => {
    const guest = await start(misbehaving('crash'));
    const firstPid = guest.pid;
    const results = await guest.translate(entries('ab', 'cd', 'crash', 'ef'));
    ok(results[0], 'spa:ba');
    ok(results[1], 'spa:dc');
    failed(results[2], /the guest exited with code 3[\s\S]*crashing on purpose/);
    ok(results[3], 'spa:fe');
    assert.equal(guest.restarts, 1);
    assert.notEqual(guest.pid, firstPid);
    assert.equal(isRunning(firstPid), false);
    await closeAndCheck(guest);
  });

  test('when the guest dies, every pending request fails at once and is sent again alone', async () => {
    const guest = await start(misbehaving('crash-pending'), { requestTimeoutMs: 1_000 });
    const began = Date.now();
    const results = await guest.translate(entries('fast', 'slow', 'crash', 'quick'));
    // not 2 × 20 s: the crash failed both pending requests at once; each was then sent alone, where
    // "slow" (which this guest never answers) timed out and "crash" crashed the guest again
    assert.ok(Date.now() - began < 5000, `took ${Date.now() - began} ms`);
    ok(results[0], 'spa:tsaf');
    failed(results[1], /^translate request got no answer or progress within 1 s$/);
    failed(results[2], /the guest exited with code 3[\s\S]*crashing with requests pending/);
    ok(results[3], 'spa:kciuq');
    await closeAndCheck(guest);
  });

  test('restarts stop when the crash-loop budget is exhausted', async () => {
    const guest = await start(misbehaving('always-crash'), { restartBudget: { restarts: 2, windowMs: 60_000 } });
    const results = await guest.translate(entries('a', 'b', 'c', 'd', 'e'));
    for (const result of results.slice(0, 3)) failed(result, /the guest exited with code 4[\s\S]*crash on every translate/);
    for (const result of results.slice(3)) {
      failed(result, /crash-loop budget is exhausted \(2 restarts within 60 s\); it last failed: the guest exited with code 4 \| stderr: crash on every translate/);
    }
    assert.equal(guest.restarts, 2);
    await closeAndCheck(guest);
  });

  test('a restart that fails is reported on the entries it was for', async () => {
    const state = join(mkdtempSync(join(tmpdir(), 'mt-eval-host-test-')), 'starts');
    const guest = await start(misbehaving('flaky-start'), { env: { ...process.env, MISBEHAVING_STATE: state } });
    const [crashed] = await guest.translate(entries('a'));
    failed(crashed, /^the guest exited with code 3 \| stderr: first process crashes$/);
    const [unstarted] = await guest.translate(entries('b'));
    failed(unstarted, /^restarting the guest failed: guest `.*misbehaving.js flaky-start` stopped before answering initialize: the guest exited with code 5 \| stderr: later starts fail$/);
    assert.equal(guest.restarts, 1);
    await closeAndCheck(guest);
  });

  test('a request with no answer times out; the entries say so', async () => {
    const guest = await start(misbehaving('hang'), { requestTimeoutMs: 300, cancelGraceMs: 200 });
    const began = Date.now();
    const results = await guest.translate(entries('a', 'b'));
    // the request, then each entry alone: each times out, and the guest, which answers no cancel either,
    // is stopped and replaced each time
    assert.ok(Date.now() - began < 4000, `took ${Date.now() - began} ms`);
    for (const result of results) failed(result, /^translate request got no answer or progress within 0\.3 s$/);
    assert.equal(guest.restarts, 2);
    await closeAndCheck(guest);
  });

  test('progress notifications reset the timeout, but not the hard limit', async () => {
    const guest = await start(misbehaving('progress'), { requestTimeoutMs: 300, hardTimeoutMs: 1500 });
    ok((await guest.translate(entries('progress 900')))[0], 'spa:009 ssergorp');
    failed((await guest.translate(entries('progress 3000')))[0], /^translate request hit the hard cap of 1\.5 s$/);
    // a request whose own timeout (the config's per entry) is longer than the limit gets its timeout
    ok((await guest.translate(entries('progress 2000'), { ...CONFIG, timeout_s: 3 }))[0], 'spa:0002 ssergorp');
    await closeAndCheck(guest);
  });

  test('junk on stdout is logged and skipped', async () => {
    const guest = await start(misbehaving('junk'));
    const results = await guest.translate(entries('abc', 'de'));
    ok(results[0], 'spa:cba');
    ok(results[1], 'spa:ed');
    const log = guest.logText();
    assert.match(log, /warn: skipped a guest stdout line that is not a JSON object: hello, this is not JSON/);
    assert.match(log, /not a JSON object: \[1, 2, 3\]/);
    assert.match(log, /not a JSON object: \{broken json/);
    assert.match(log, /not a JSON-RPC 2.0 message: \{"unrelated": true\}/);
    assert.match(log, /warn: the guest answered with id 9999, which names no request in flight; dropped/);
    assert.match(log, /warn: \[guest \d+\] a log notification/);
    await closeAndCheck(guest);
  });

  test('a line over the limit fails only the request it answers', async () => {
    const guest = await start(misbehaving('huge'), { maxLineBytes: 16_384 });
    const results = await guest.translate(entries('ab', 'huge', 'cd'));
    ok(results[0], 'spa:ba');
    // (a limit the host set lower than the protocol's is said to be its own, with how to raise it)
    failed(results[1], /^guest sent a line of \d+\+? bytes, over this host's 16384-byte line limit \(its maxLineBytes option; the protocol allows 16777216 bytes: raise maxLineBytes to take longer lines\)$/);
    ok(results[2], 'spa:dc');
    ok((await guest.translate(entries('still works')))[0], 'spa:skrow llits');
    await closeAndCheck(guest);
  });

  test('an entry whose request would be over the line limit fails alone, unsent; the others are translated', async () => {
    const guest = await start(misbehaving('sizes'), { maxLineBytes: 4_096 });
    const results = await guest.translate([{ id: 'a', source: 'x' }, { id: 'big', source: 'y'.repeat(5_000) }]);
    assert.deepEqual(results.map((r) => [r.id, r.predicted]), [['a', '1'], ['big', null]]);
    assert.equal(results[1].error, "the entry is too large to send: its request would be over this host's 4096-byte "
      + 'line limit (its maxLineBytes option; the protocol allows 16777216 bytes: raise maxLineBytes to take longer lines)');
    await closeAndCheck(guest);
  });

  test('a batch whose request line is at the line limit goes in one request; one byte over, it is split', async () => {
    const batch = [{ id: 'a', source: 'é'.repeat(3_000) }, { id: 'b', source: 'x' }];
    // The host counts the request line at the longest id it may be sent with, less its "\n".
    const envelope = '{"jsonrpc":"2.0","id":9007199254740991,"method":"translate","params":}'.length;
    const exact = envelope + Buffer.byteLength(JSON.stringify({ entries: batch, config: CONFIG }));
    for (const [maxLineBytes, perRequest] of [[exact, '2'], [exact - 1, '1']]) {
      const guest = await start(misbehaving('sizes'), { maxLineBytes });
      const results = await guest.translate(batch);
      assert.deepEqual(results.map((r) => [r.id, r.predicted, r.error]), [['a', perRequest, null], ['b', perRequest, null]],
        `maxLineBytes ${maxLineBytes}`);
      await closeAndCheck(guest);
    }
  });

  test('a line that is not UTF-8 fails only the request it answers', async () => {
    const guest = await start(misbehaving('bad-utf8'));
    const results = await guest.translate(entries('ab', 'bad', 'cd'));
    ok(results[0], 'spa:ba');
    failed(results[1], /guest sent a line that is not valid UTF-8 \(byte 0xff at offset 69\)/);
    ok(results[2], 'spa:dc');
    await closeAndCheck(guest);
  });

  test('wrong, duplicate and missing result ids fail only the affected entries', async () => {
    const guest = await start(misbehaving('ids'));
    const results = await guest.translate(entries('fine', 'dup', 'missing', 'wrong', 'malformed', 'good'));
    ok(results[0], 'spa:enif');
    failed(results[1], /returned 2 results for this entry/);
    failed(results[2], /returned no result for this entry/);
    failed(results[3], /returned no result for this entry/);
    failed(results[4], /unusable result: \$\.predicted: expected a string, got the number 42/);
    ok(results[5], 'spa:doog');
    const log = guest.logText();
    // (once for the answer, in the words of every host: it had been a line per result, worded as no other host)
    assert.match(log, /the method returned results that match no entry it was sent \(ids "e3-wrong", "zzz"; 1 item that is not an object: the string "not an object"\); they were dropped/);
    // (each call's strays its own: a warning said already, as a retried call's, is not said again)
    for (let call = 0; call < 4; call++) await guest.translate(entries(...Array(call).fill('fine'), 'wrong'));
    // (said for the first three calls that return such results, the third saying so: not once a batch for ever)
    assert.equal(guest.logText().match(/match no entry it was sent/g).length, 3);
    assert.match(guest.logText(), /"e1-wrong", "zzz"; 1 item that is not an object: the string "not an object"\); they were dropped \(.*\); later calls' results that match no entry are dropped without a word/);
    await closeAndCheck(guest);
  });

  test('a guest that closes stdout is treated as dead and stopped', async () => {
    const guest = await start(misbehaving('closes-stdout'), { requestTimeoutMs: 1_000 });
    const pid = guest.pid;
    const results = await guest.translate(entries('ab', 'slow', 'close'));
    ok(results[0], 'spa:ba');
    failed(results[1], /^translate request got no answer or progress within 1 s$/); // sent again alone: never answered
    failed(results[2], /the guest closed its stdout[\s\S]*closing stdout/);
    assert.ok(await waitFor(() => !isRunning(pid), 3000), `guest ${pid} still running`);
    await closeAndCheck(guest);
  });
});

describe('host shutdown leaves nothing behind', () => {
  test('a guest that ignores shutdown, stdin and SIGTERM is killed', async () => {
    const guest = await start(misbehaving('ignore-sigterm'), { closeStepMs: 300 });
    const pid = guest.pid;
    const began = Date.now();
    await closeAndCheck(guest, { withinMs: 3000 });
    assert.ok(Date.now() - began >= 800, 'close() should have tried shutdown, stdin and SIGTERM first');
    assert.match(guest.stderrTail, /ignoring SIGTERM/);
    assert.equal(isRunning(pid), false);
  });

  test('calls running when the host closes fail as closed, not as never sent', async () => {
    const guest = await start(nodeGuestCommand, { closeStepMs: 300 });
    const running = guest.translate(entries('!hang', '!hang', '!hang'), CONFIG);
    await new Promise((resolve) => setTimeout(resolve, 200)); // (the request is on the wire)
    await closeAndCheck(guest);
    const results = await running;
    assert.equal(results.length, 3);
    for (const result of results) {
      failed(result, /^the guest was closed/);
      assert.doesNotMatch(result.error, /before this request was sent/);
    }
  });

  test('a grandchild the guest started is stopped with it', async () => {
    const guest = await start(misbehaving('grandchild'), { closeStepMs: 300 });
    assert.ok(await waitFor(() => /grandchild pid \d+/.test(guest.stderrTail)));
    const grandchild = Number(/grandchild pid (\d+)/.exec(guest.stderrTail)[1]);
    assert.equal(isRunning(grandchild), true);
    await closeAndCheck(guest);
    assert.equal(isRunning(grandchild), false, `grandchild ${grandchild} still running`);
  });

  test('a grandchild holding stdout open does not hide the guest\'s death', async () => {
    const guest = await start(misbehaving('grandchild'), { closeStepMs: 300, requestTimeoutMs: 20_000 });
    assert.ok(await waitFor(() => /grandchild pid \d+/.test(guest.stderrTail)));
    const grandchild = Number(/grandchild pid (\d+)/.exec(guest.stderrTail)[1]);
    const began = Date.now();
    const [result] = await guest.translate(entries('crash'));
    assert.ok(Date.now() - began < 3000, `took ${Date.now() - began} ms`);
    failed(result, /the guest exited with code 6[\s\S]*leaving the grandchild behind/);
    assert.ok(await waitFor(() => !isRunning(grandchild), 3000), `grandchild ${grandchild} still running`);
    await closeAndCheck(guest);
  });

  test('a stderr flood over 1 MB is drained and only its tail kept', async () => {
    const guest = await start(misbehaving('stderr-flood'), { startTimeoutMs: 10_000 });
    const results = await guest.translate(entries('abc'));
    ok(results[0], 'spa:cba');
    assert.ok(guest.stderrTail.length <= 64 * 1024, `tail of ${guest.stderrTail.length} characters`);
    assert.ok(guest.records.filter((r) => r.level === 'info').length >= 2000);
    await closeAndCheck(guest);
  });
});

