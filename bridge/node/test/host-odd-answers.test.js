// The Node host against answers that name no request: an error with "id": null (a line the guest could not read),
// an answer with an id no request in flight has (said once), a program that sends the request back (cat) or is a
// text filter in other ways; an
// answer without a results list, which fails only the entry it concerns; a restart naming what stopped the guest
// it replaces; and a command with no program in it (an empty MT_EVAL too).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';

import { startGuest } from '../index.js';
import { makeProject } from './helpers/champollion.js';
import { CONFIG, nodePackage, recordingLogger, repo, testGuest, waitFor } from './helpers/guests.js';

const nullId = [process.execPath, testGuest('misbehaving.js'), 'null-id'];

test('an error without an id fails the one request in flight at once', async () => {
  const { logger, text } = recordingLogger();
  const guest = await startGuest(nullId, { config: CONFIG, cwd: repo, logger, closeStepMs: 500, requestTimeoutMs: 30_000 });
  try {
    const began = Date.now();
    const [result] = await guest.translate([{ id: 'a', source: 'unreadable' }]);
    assert.equal(result.error, 'the guest answered error -32700: not valid JSON: unreadable');
    assert.ok(Date.now() - began < 5_000, `took ${Date.now() - began} ms`);
    assert.equal((await guest.translate([{ id: 'b', source: 'ok' }]))[0].predicted, 'spa:ko');
    assert.doesNotMatch(text(), /dropped/);
  } finally {
    await guest.close();
  }
});

test('an error without an id, with several requests in flight, is logged with the guest\'s words', async () => {
  const { logger, text } = recordingLogger();
  const guest = await startGuest(nullId, { config: CONFIG, cwd: repo, logger, closeStepMs: 500, requestTimeoutMs: 30_000 });
  try {
    const slow = guest.translate([{ id: 'a', source: 'slow' }]);
    const unreadable = guest.translate([{ id: 'b', source: 'unreadable' }]);
    assert.ok(await waitFor(() => /without a request id/.test(text())), text());
    assert.match(text(), /^warn: the guest answered error -32700 without a request id; which of the 2 requests in flight it meant cannot be told \(they wait for their deadlines\): not valid JSON: unreadable$/m);
    await guest.close();
    assert.match((await slow)[0].error, /closed/);
    assert.match((await unreadable)[0].error, /closed/);
  } finally {
    await guest.close();
  }
});

for (const [answer, got] of [[{}, 'nothing'], [null, 'nothing'], [{ results: 'lots' }, '"lots"']]) {
  test(`an answer without a results list (${JSON.stringify(answer)}) fails only the entry it concerns`, async () => {
    const guest = await startGuest([process.execPath, testGuest('misbehaving.js'), 'no-results', JSON.stringify(answer)],
      { config: CONFIG, cwd: repo, logger: {}, closeStepMs: 500 });
    try {
      const sources = ['one', 'two', 'bad', 'four', 'five', 'six', 'seven'];
      const results = await guest.translate(sources.map((source, i) => ({ id: `e${i}`, source })));
      assert.deepEqual(results.map((r) => [r.predicted, r.error]), sources.map((source) => (source === 'bad'
        ? [null, `the guest answered translate without a "results" list (got ${got})`]
        : [`spa:${[...source].reverse().join('')}`, null])));
    } finally {
      await guest.close();
    }
  });
}

// Lines that name a request but are no answer as JSON-RPC 2.0 writes it: each is read as the Python host reads it, at
// once, rather than skipped and left to the request's deadline.
for (const [line, error] of [
  ['{"jsonrpc":"2.0","id":$ID,"result":{"results":[{"id":"e2","predicted":"b","latency_s":NaN}]}}',
    'guest sent a line that is not valid JSON'],
  ['{"jsonrpc":"2.0","id":$ID,"result":{"results":[]},"error":{"code":-32007,"message":"boom","data":{"type":"E"}}}',
    'the method failed: E: boom'],
  ['{"jsonrpc":"2.0","id":$ID}', 'guest sent a response with neither result nor error'],
  ['{"id":$ID,"result":{"results":[{"id":"e2","predicted":"taken"}]}}', null],
  ['{"jsonrpc":"2.0","id":$ID,"result":{"results":[{"id":"e2","predicted":"taken"}]},"error":null}', null],
]) {
  test(`a line naming its request, ${line}, ${error ? 'fails its entry at once' : 'is its answer'}`, async () => {
    const { logger, text } = recordingLogger();
    const guest = await startGuest([process.execPath, testGuest('misbehaving.js'), 'odd-line', line],
      { config: CONFIG, cwd: repo, logger, closeStepMs: 500, requestTimeoutMs: 20_000 });
    try {
      const began = Date.now();
      const sources = error ? ['one', 'two', 'bad', 'four'] : ['', '', 'bad']; // (the answer is for e2 alone)
      const results = await guest.translate(sources.map((source, i) => ({ id: `e${i}`, source })).filter((e) => e.source));
      assert.deepEqual(results.map((r) => [r.id, r.predicted, r.error]), error
        ? [['e0', 'spa:eno', null], ['e1', 'spa:owt', null], ['e2', null, error], ['e3', 'spa:ruof', null]]
        : [['e2', 'taken', null]]);
      assert.ok(Date.now() - began < 5_000, `took ${Date.now() - began} ms`);
      assert.doesNotMatch(text(), /stopping|restarting|timed out/);
    } finally {
      await guest.close();
    }
  });
}

test('a log notification without "jsonrpc" is taken, as the Python host takes it', async () => {
  const { logger, text } = recordingLogger();
  const guest = await startGuest([process.execPath, testGuest('misbehaving.js'), 'line-then-answer',
    '{"method":"log","params":{"level":"warning","message":"a note of the guest\'s"}}'],
  { config: CONFIG, cwd: repo, logger, closeStepMs: 500 });
  try {
    assert.deepEqual((await guest.translate([{ id: 'a', source: 'one' }])).map((r) => r.predicted), ['spa:eno']);
    assert.match(text(), /a note of the guest's/);
    assert.doesNotMatch(text(), /skipped a guest stdout line/);
  } finally {
    await guest.close();
  }
});

test('answers with the id as a string, where an integer was sent, are said once, naming the id; each request times out naming its own', async () => {
  const { logger, records } = recordingLogger();
  const guest = await startGuest([process.execPath, testGuest('misbehaving.js'), 'string-id'],
    { config: CONFIG, cwd: repo, logger, closeStepMs: 500, requestTimeoutMs: 1_000, cancelGraceMs: 300 });
  try {
    const results = await Promise.all([guest.translate([{ id: 'a', source: 'x' }]), guest.translate([{ id: 'b', source: 'y' }])]);
    const [first, second] = results.map(([result]) => result.error);
    const timedOut = (id) => new RegExp(`^translate request got no answer or progress within 1 s; the guest answered with id "${id}", which names no request in flight \\(request ${id} is, with an integer id: an answer carries its request's id as it was sent\\)$`);
    assert.match(first, timedOut(first.match(/id "(\d+)"/)?.[1]));
    assert.match(second, timedOut(second.match(/id "(\d+)"/)?.[1]));
    // (both timed out together: neither could be blamed, so each was sent again alone, to a guest of its own, and
    // failed there naming the answer to its own request: 2, the first of each guest, as in the Python host)
    const firstGuest = records.slice(0, records.findIndex((record) => record.message.startsWith('stopping the guest')));
    const said = firstGuest.filter((record) => record.message.includes('names no request in flight'));
    assert.equal(said.length, 2, JSON.stringify(records)); // one warning, one at debug level
    assert.equal(said[0].level, 'warn');
    assert.match(said[0].message, /^the guest answered with id "[23]", which names no request in flight \(request [23] is, with an integer id: an answer carries its request's id as it was sent\); dropped \(as later such answers are, without a warning\)$/);
    assert.equal(said[1].level, 'debug');
  } finally {
    await guest.close();
  }
});

test('entries whose answer came with an id no request has fail naming that answer, not a bare timeout', async () => {
  const { logger, text } = recordingLogger();
  const guest = await startGuest([process.execPath, testGuest('misbehaving.js'), 'wrong-id'],
    { config: CONFIG, cwd: repo, logger, closeStepMs: 500, requestTimeoutMs: 500, cancelGraceMs: 300 });
  try {
    const results = await guest.translate([{ id: 'a', source: 'x' }, { id: 'b', source: 'y' }]);
    for (const result of results) {
      assert.match(result.error, /^translate request got no answer or progress within 0\.5 s; the guest answered with id 10\d\d, which names no request in flight$/);
    }
    assert.match(text(), /the guest answered with id 1002, which names no request in flight; dropped \(as later such answers are, without a warning\)/);
  } finally {
    await guest.close();
  }
});

test('each restart names what stopped the guest it replaces, not an earlier one', async () => {
  const { logger, records } = recordingLogger();
  const guest = await startGuest([process.execPath, testGuest('misbehaving.js'), 'hang-no-cancel'],
    { config: CONFIG, cwd: repo, logger, closeStepMs: 500, requestTimeoutMs: 300 });
  try {
    for (const source of ['hang', 'ok', 'ok', 'hang', 'ok']) await guest.translate([{ id: 'e', source }]);
    const said = (start) => records.filter((r) => r.message.startsWith(start)).map((r) => r.message.replace(/^.*?\): |^.*? after: /, ''));
    const stops = said('stopping the guest');
    assert.deepEqual(stops, ['it cannot cancel, and request 2 timed out', 'it cannot cancel, and request 4 timed out']);
    assert.deepEqual(said('restarting the guest'), stops.map((reason) => `the guest was stopped: ${reason}`));
  } finally {
    await guest.close();
  }
});

test('a program that sends the request back is not a guest, and is told so at once', async () => {
  const began = Date.now();
  await assert.rejects(startGuest(['cat'], { logger: {}, closeStepMs: 500 }), (error) => {
    assert.equal(error.name, 'GuestStartError');
    assert.equal(error.message, 'guest `cat` is not a bridge guest: it sent the initialize request back instead of '
      + 'answering it, as a text filter does; a guest must speak mt-eval-bridge/1 (bridge/PROTOCOL.md)');
    return true;
  });
  assert.ok(Date.now() - began < 5_000);
});

// Two text filters: one upper-cases each line it reads (in Node); sort writes what it read when its input ends (it
// waits single-threaded in read(), which only /proc on Linux shows).
const UPPER = [process.execPath, '-e', "process.stdin.on('data', (d) => process.stdout.write(String(d).toUpperCase()));"];

for (const [name, command, what, skip] of [
  ['answers with the request in its own words', UPPER, "it answered the initialize request with a line of text "
    + "('{\"JSONRPC\":\"2.0\",\"ID\":1,\"METHOD\":\"INITIALIZE\",\"PARAMS\":{\"PROTOCOL_VERSIONS\"", false],
  ['keeps the id of the request in the line it writes back', [process.execPath, '-e',
    "process.stdin.on('data', (d) => process.stdout.write(String(d).replace(/\\n/g, ' (done)\\n')));"],
    "it answered the initialize request with a line of text ('{\"jsonrpc\":\"2.0\",\"id\":1,", false],
  ['reads the request and waits for more input', ['sort'],
    'it read the initialize request and waits for more input without answering', process.platform !== 'linux'],
]) {
  test(`a text filter that ${name} is not a guest, and is told so within seconds`, { skip }, async () => {
    const began = Date.now();
    await assert.rejects(startGuest(command, { logger: {}, closeStepMs: 500 }), (error) => {
      assert.equal(error.name, 'GuestStartError');
      assert.ok(error.message.includes(` is not a bridge guest: ${what}`), error.message);
      assert.ok(error.message.includes(', as a text filter does; a guest must speak mt-eval-bridge/1'), error.message);
      return true;
    });
    assert.ok(Date.now() - began < 10_000, `took ${Date.now() - began} ms (the start timeout is 30 s)`);
  });
}

test('a command whose program is empty is refused before anything is spawned', async () => {
  await assert.rejects(startGuest(['', 'serve']), /command must be a non-empty array of strings, a program first/);
});

test('MT_EVAL set but empty is as if unset: mt-eval is looked for on PATH, and the message says how to point at it', (t) => {
  const project = makeProject({ config: { version: 3, inputLocale: 'en', pairs: { 'en:fr': { methodPlugin: 'rot13' } } },
    plugins: ['rot13'], files: { 'locales/en.json': '{"hello": "Hello"}\n' } });
  t.after(() => project.cleanup());
  const env = { ...process.env, PATH: '/nonexistent-bin', MT_EVAL: '' };
  const run = spawnSync(process.execPath, [join(nodePackage, 'bin', 'mt-eval-locales.js'), '--config', project.root, '--quiet'],
    { encoding: 'utf8', env });
  assert.equal(run.status, 1);
  assert.match(run.stderr, /cannot start: the mt-eval command is not on PATH \(ENOENT\)/);
  assert.match(run.stderr, /point Node at it with the environment variable MT_EVAL/);
  assert.doesNotMatch(run.stderr, /cannot be empty/);
});

test('initialize answered under its id as a string fails the start at once, saying so (as the Python host does)', async () => {
  const guest = `
import { createInterface } from 'node:readline';
for await (const line of createInterface({ input: process.stdin })) {
  const message = JSON.parse(line);
  const result = { protocol_version: 'mt-eval-bridge/1', method: { name: 'Ids as strings', method_id: 'string-ids' } };
  if (message.method === 'initialize') process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: String(message.id), result }) + '\\n');
}`;
  const began = Date.now();
  await assert.rejects(startGuest([process.execPath, '--input-type=module', '-e', guest], { config: CONFIG, closeStepMs: 500, startTimeoutMs: 20_000 }),
    (error) => {
      assert.equal(error.name, 'GuestStartError');
      assert.match(error.message, / failed to start: it answered initialize with id "1", not 1: an answer carries its request's id as it was sent \(an integer stays an integer\)$/);
      return true;
    });
  assert.ok(Date.now() - began < 10_000, `took ${Date.now() - began} ms`);
});
