// mt-eval-guest behaviour beyond the conformance transcripts: cancellation, concurrency, limits, stdout hygiene and
// result normalisation (loading the method and the command line: guest-loading.test.js).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { CONFIG, guestKit, reverseFixture } from './helpers/guests.js';
import { defaults, schema } from '../lib/contract/schema.js';
import { GUEST_CAPABILITIES } from '../lib/guest.js';

const { moduleFile, guest } = guestKit();

const SLEEPY = `
let active = 0, peak = 0;
export const name = 'Sleepy';
export async function translate(entries, config, { signal } = {}) {
  peak = Math.max(peak, ++active);
  const ms = Number(entries[0]?.source ?? 0);
  await new Promise((resolve) => setTimeout(resolve, ms));
  active--;
  return entries.map((e) => ({ id: e.id, predicted: 'done', metadata: { peak, aborted: signal?.aborted ?? null } }));
}
`;

describe('requests in flight', () => {
  test('the guest declares every capability of the protocol: the defaults, but 64 calls at once and cancel', () => {
    const protocol = defaults(schema('bridge-initialize-result').$defs.Capabilities);
    assert.deepEqual(GUEST_CAPABILITIES, { ...protocol, max_concurrency: 64, cancel: true });
  });

  test('up to 64 translate calls run at once (an async runtime takes many); the rest wait their turn', async () => {
    const driver = guest(['--module', moduleFile('sleepy.js', SLEEPY)]);
    assert.equal((await driver.initialize()).result.capabilities.max_concurrency, 64);
    const began = Date.now();
    for (let i = 0; i < 68; i++) driver.translate(i, [{ id: `e${i}`, source: '300' }]);
    const answers = await driver.collect(68);
    const elapsed = Date.now() - began;
    const peaks = [...answers.values()].map((m) => m.result.results[0].metadata.peak);
    assert.equal(Math.max(...peaks), 64);
    assert.ok(elapsed >= 550, `68 calls of 300 ms, 64 at a time, took only ${elapsed} ms`);
    assert.deepEqual(await driver.close(), { code: 0, signal: null });
  });

  test('cancel answers a running request with -32001 and drops its late result', async () => {
    const driver = guest(['--module', moduleFile('sleepy-cancel.js', SLEEPY)]);
    await driver.initialize();
    driver.translate(1, [{ id: 'slow', source: '400' }]);
    driver.send({ jsonrpc: '2.0', method: 'cancel', params: { id: 1 } });
    const cancelled = await driver.next();
    assert.deepEqual(cancelled.error, { code: -32001, message: 'cancelled' });
    assert.equal(cancelled.id, 1);
    driver.translate(2, [{ id: 'quick', source: '600' }]);
    const next = await driver.next();
    assert.equal(next.id, 2, 'the cancelled request must not be answered again');
    assert.deepEqual(await driver.close(), { code: 0, signal: null });
    assert.equal(driver.lines.length, 0);
  });

  test('cancel of a queued request answers it without running it', async () => {
    const driver = guest(['--module', moduleFile('sleepy-queue.js', SLEEPY)]);
    await driver.initialize();
    for (let i = 0; i < 65; i++) driver.translate(i, [{ id: `e${i}`, source: '300' }]);
    driver.send({ jsonrpc: '2.0', method: 'cancel', params: { id: 64 } });
    assert.deepEqual((await driver.next()).error?.code, -32001);
    const answers = await driver.collect(64);
    assert.deepEqual([...answers.keys()].sort((a, b) => a - b), [...Array(64).keys()]);
    assert.ok([...answers.values()].every((m) => m.result.results[0].predicted === 'done'));
    await driver.close();
  });

  test('closing stdin lets in-flight work finish, then exits 0', async () => {
    const driver = guest([reverseFixture]);
    await driver.initialize();
    driver.translate(7, [{ id: 'a', source: '!sleep 300' }]);
    driver.child.stdin.end();
    const answer = await driver.next();
    assert.equal(answer.result.results[0].predicted, 'spa:003 peels!');
    assert.deepEqual(await driver.exited, { code: 0, signal: null });
  });
});

describe('the wire', () => {
  test('a request line over the limit gets -32004 with its id; the guest keeps serving', async () => {
    const driver = guest(['--max-line-bytes', '2000', reverseFixture]);
    await driver.initialize();
    driver.translate(5, [{ id: 'big', source: 'x'.repeat(5000) }]);
    const tooBig = await driver.next();
    assert.equal(tooBig.id, 5);
    assert.equal(tooBig.error.code, -32004);
    assert.match(tooBig.error.message, /^request of \d{4}\+? bytes is over the 2000-byte limit$/); // (the Python guest's words)
    driver.sendRaw(`${'y'.repeat(3000)}\n`);
    assert.deepEqual([(await driver.next()).id, driver.lines.length], [null, 0]);
    driver.translate(6, [{ id: 'a', source: 'ok' }]);
    assert.equal((await driver.next()).result.results[0].predicted, 'spa:ko');
    await driver.close();
  });

  test('a response-shaped message gets -32600 under its id', async () => {
    const driver = guest([reverseFixture]);
    await driver.initialize();
    driver.send({ jsonrpc: '2.0', id: 77, result: {} });
    const answer = await driver.next();
    assert.equal(answer.id, 77);
    assert.equal(answer.error.code, -32600);
    await driver.close();
  });

  test('a line that is not UTF-8 gets -32700 with a null id', async () => {
    const driver = guest([reverseFixture]);
    await driver.initialize();
    driver.sendRaw(Buffer.concat([Buffer.from('{"jsonrpc":"2.0","id":3,"method":"translate","params":{"x":"'),
      Buffer.from([0xc3, 0x28]), Buffer.from('"}}\n')]));
    const answer = await driver.next();
    assert.equal(answer.id, null);
    assert.equal(answer.error.code, -32700);
    await driver.close();
  });

  test('everything the method prints reaches stderr, never stdout', async () => {
    const file = moduleFile('noisy.js', `
      console.log('log at import'); console.info('info'); console.warn('warn'); console.error('error');
      console.debug('debug'); console.table([{ a: 1 }]); console.dir({ dir: true });
      process.stdout.write('raw stdout write\\n');
      export async function translate(entries) {
        console.log('log in translate');
        process.stdout.write('raw write in translate\\n');
        return entries.map((e) => ({ id: e.id, predicted: e.source }));
      }`);
    const driver = guest(['--module', file]);
    await driver.initialize();
    driver.translate(1, [{ id: 'a', source: 'x' }]);
    assert.equal((await driver.next()).result.results[0].predicted, 'x');
    await driver.close();
    assert.equal(driver.lines.length, 0, `stray stdout: ${driver.lines}`);
    for (const text of ['log at import', 'info', 'warn', 'error', 'debug', 'dir: true', 'raw stdout write',
      'log in translate', 'raw write in translate']) {
      assert.ok(driver.stderr.includes(text), `"${text}" missing from stderr`);
    }
  });
});

describe('translate requests and results', () => {
  const shapes = moduleFile('shapes.js', `
    export function translate(entries, config) {
      if (entries[0]?.source === 'not-a-list') return { results: [] };
      if (entries[0]?.source === 'throw-string') throw 'plain string';
      if (entries[0]?.source === 'config') return [{ id: entries[0].id, predicted: 'c', metadata: { config } }];
      return [
        { id: 'full', predicted: 'p', latency_s: 1.5, usage: { prompt_tokens: 3, completion_tokens: 4 },
          tool_calls: [{ name: 'lookup' }], tool_call_count: 1, metadata: { k: 'v' } },
        { id: 'bare', predicted: 'q' },
        { id: 'bad-type', predicted: 7 },
        { id: 'extra', predicted: 'r', score: 0.5 },
        { id: 'bad-usage', predicted: 's', usage: { prompt_tokens: -1 } },
        { predicted: 'no id' },
        'not an object',
      ];
    }`);

  test('results go out in the schema shape without default fields; malformed ones become entry errors', async () => {
    const driver = guest(['--module', shapes]);
    const init = await driver.initialize();
    assert.deepEqual(init.result.method, { name: 'shapes', method_id: 'shapes' });
    assert.equal(init.result.card, null);
    const ids = ['full', 'bare', 'bad-type', 'extra', 'bad-usage'];
    driver.translate(1, ids.map((id) => ({ id, source: 's' })));
    const answer = await driver.next();
    const results = Object.fromEntries(answer.result.results.slice(0, ids.length).map((r) => [r.id, r]));
    assert.deepEqual(Object.keys(results), ids);
    // Items without a string id go on as their host reports them: the id alone, or for no object the item itself
    // (a string cut short), so the host can say what came back.
    assert.deepEqual(answer.result.results.slice(ids.length), [{ id: null }, 'not an object']);
    assert.deepEqual(results.full, { id: 'full', predicted: 'p', latency_s: 1.5,
      usage: { prompt_tokens: 3, completion_tokens: 4 }, tool_calls: [{ name: 'lookup' }],
      tool_call_count: 1, metadata: { k: 'v' } });
    const { latency_s: latency, ...bare } = results.bare;
    assert.deepEqual(bare, { id: 'bare', predicted: 'q' });
    assert.ok(latency >= 0 && latency < 1);
    assert.equal(results['bad-type'].error, 'the method returned an unusable result: $.predicted: expected a string, got the number 7');
    assert.deepEqual(results.extra, { id: 'extra', predicted: 'r', latency_s: results.extra.latency_s, metadata: { score: 0.5 } });
    assert.equal(results['bad-usage'].error, 'the method returned an unusable result: $.usage.prompt_tokens: must be >= 0, got -1');
    assert.deepEqual(answer.result.normalised, { 'unknown field "score" moved into metadata': 1 });
    await driver.close();
  });

  test('a non-list return fails each entry; a thrown non-Error is -32007', async () => {
    const driver = guest(['--module', shapes]);
    await driver.initialize();
    driver.translate(1, [{ id: 'a', source: 'not-a-list' }]);
    const notList = await driver.next();
    assert.deepEqual(notList.result.results, [{ id: 'a',
      error: 'the method returned an object, not a list of results: return an array of result objects, one per entry' }]);
    driver.translate(2, [{ id: 'a', source: 'throw-string' }]);
    const thrown = await driver.next();
    assert.equal(thrown.error.code, -32007);
    assert.equal(thrown.error.data.type, 'thrown'); // (a value that is not an Error has no name)
    assert.match(thrown.error.message, /^thrown: /);
    await driver.close();
  });

  test('the RunConfig reaches the method with its defaults; initialize\'s config is the fallback', async () => {
    const driver = guest(['--module', shapes]);
    await driver.initialize({ source_lang: 'eng', target_lang: 'fra', params: { x: 1 } });
    driver.translate(1, [{ id: 'a', source: 'config' }]);
    const { config } = (await driver.next()).result.results[0].metadata;
    assert.deepEqual(config, { source_lang: 'eng', target_lang: 'fra', model: null, base_url: null,
      temperature: null, max_tokens: null, batch_size: 16, concurrency: 8, timeout_s: 120, seed: null, params: { x: 1 } });
    await driver.close();
  });

  test('invalid translate params and duplicate requests are refused', async () => {
    const driver = guest([reverseFixture]);
    await driver.initialize(null);
    const cases = [
      [{ entries: [{ id: 'a', source: 'x' }] }, -32602, /params.config is missing/],
      [{ entries: [{ id: 'a', source: 'x' }], config: { source_lang: 'English', target_lang: 'spa' } }, -32602,
        /^invalid config: \$\.source_lang: "English" is not a language code$/],
      [{ entries: [{ id: 'a', source: 'x' }], config: { ...CONFIG, batchsize: 4 } }, -32602, /^invalid config: \$\.batchsize: unknown field "batchsize"$/],
      [{ entries: [{ id: 'a' }], config: CONFIG }, -32602, /entries\[0\].source must be a string/],
      [{ entries: [{ id: 'a', source: 'x' }, { id: 'a', source: 'y' }], config: CONFIG }, -32602, /"a" appears twice/],
      [{ entries: 'abc', config: CONFIG }, -32602, /must be a list of entries/],
    ];
    for (const [i, [params, code, pattern]] of cases.entries()) {
      driver.send({ jsonrpc: '2.0', id: i, method: 'translate', params });
      const answer = await driver.next();
      assert.equal(answer.id, i);
      assert.equal(answer.error?.code, code, JSON.stringify(answer));
      assert.match(answer.error.message, pattern);
    }
    driver.send({ jsonrpc: '2.0', id: 'again', method: 'initialize', params: { protocol_versions: ['mt-eval-bridge/1'] } });
    assert.equal((await driver.next()).error.code, -32600);
    driver.translate('dup', [{ id: 'a', source: '!sleep 200' }], CONFIG);
    driver.translate('dup', [{ id: 'b', source: 'x' }], CONFIG);
    const duplicate = await driver.next();
    assert.equal(duplicate.error.code, -32600);
    assert.match(duplicate.error.message, /already in flight/);
    assert.equal((await driver.next()).result.results[0].id, 'a');
    driver.send({ jsonrpc: '2.0', id: 's', method: 'shutdown', params: {} });
    assert.equal((await driver.next()).result, null);
    driver.translate('late', [{ id: 'a', source: 'x' }], CONFIG);
    assert.match((await driver.next()).error.message, /shutting down/);
    assert.deepEqual(await driver.close(), { code: 0, signal: null });
  });
});
