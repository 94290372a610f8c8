// mt-eval-guest behaviour beyond the conformance transcripts: cancellation, concurrency, limits,
// stdout hygiene, result normalisation, loading errors and the command line.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';

import { CONFIG, LineDriver, nodeGuestCommand, nodePackage, reverseFixture } from './helpers/guests.js';
import { defaults, schema } from '../lib/contract/schema.js';
import { GUEST_CAPABILITIES } from '../lib/guest.js';

const bin = join(nodePackage, 'bin', 'mt-eval-guest.js');
const scratch = mkdtempSync(join(tmpdir(), 'mt-eval-guest-test-'));
const drivers = [];

function moduleFile(name, source) {
  const file = join(scratch, name);
  writeFileSync(file, source);
  return file;
}

function guest(args, options) {
  const driver = new LineDriver([process.execPath, bin, ...args], options);
  drivers.push(driver);
  return driver;
}

after(() => drivers.forEach((driver) => driver.kill()));

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
    const results = Object.fromEntries(answer.result.results.map((r) => [r.id, r]));
    assert.deepEqual(Object.keys(results), ids);
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
    assert.match(driver.stderr, /dropped a result without a string "id"/);
  });

  test('a non-list return fails each entry; a thrown non-Error is -32007', async () => {
    const driver = guest(['--module', shapes]);
    await driver.initialize();
    driver.translate(1, [{ id: 'a', source: 'not-a-list' }]);
    const notList = await driver.next();
    assert.deepEqual(notList.result.results, [{ id: 'a', error: 'the method returned an object, not a list of results' }]);
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

describe('loading the method', () => {
  test('--module takes its id from the file name and its name from the export', async () => {
    const file = moduleFile('My_Fancy Method.mjs', `export const name = 'Fancy';
      export async function translate(entries) { return []; }
      export function methodCard() { return { paradigm: 'rule-based' }; }
      export async function close() { process.stderr.write('close() was called\\n'); }`);
    const driver = guest(['--module', file]);
    const init = (await driver.initialize()).result;
    assert.deepEqual(init.method, { name: 'Fancy', method_id: 'my-fancy-method' });
    assert.deepEqual(init.card, { paradigm: 'rule-based' });
    assert.deepEqual(init.guest.runtime, `node ${process.version}`);
    assert.deepEqual(await driver.close(), { code: 0, signal: null });
    assert.match(driver.stderr, /close\(\) was called/);
  });

  test('where Node keeps a compile cache the guest turns it on; a cache that fails costs nothing', async () => {
    const file = moduleFile('cached.js', 'export async function translate(entries) { return []; }\n');
    const withModule = (enable) => `data:text/javascript,${encodeURIComponent(`const builtin = process.getBuiltinModule;
      process.getBuiltinModule = (name) => (name === 'node:module' ? { enableCompileCache: ${enable} } : builtin(name));`)}`;
    for (const [enable, said] of [["() => process.stderr.write('compile cache on\\n')", /compile cache on/],
      ["() => { throw new Error('no cache here'); }", /^(?![\s\S]*no cache here)/]]) {
      const driver = new LineDriver([process.execPath, '--import', withModule(enable), bin, '--module', file]);
      drivers.push(driver);
      assert.equal((await driver.initialize()).result.method.name, 'cached');
      assert.deepEqual(await driver.close(), { code: 0, signal: null });
      assert.match(driver.stderr, said);
    }
  });

  test('the launcher starts the guest whether or not require() loads ES modules, and says nothing of how', async () => {
    const file = moduleFile('launched.js', 'export async function translate(entries) { return []; }\n');
    const quiet = /^(?![\s\S]*(ExperimentalWarning|ES Module))/;
    const flags = process.features.require_module ? [[], ['--no-experimental-require-module']] : [[]];
    for (const flag of flags) {
      const driver = new LineDriver([process.execPath, ...flag, bin, '--module', file]);
      drivers.push(driver);
      assert.equal((await driver.initialize()).result.method.name, 'launched');
      assert.deepEqual(await driver.close(), { code: 0, signal: null });
      assert.match(driver.stderr, quiet);
    }
    const help = spawnSync(process.execPath, [bin, '--help'], { encoding: 'utf8' });
    assert.equal(help.status, 0);
    assert.match(help.stdout, /^usage: mt-eval-guest DIR/);
    const wrong = spawnSync(process.execPath, [bin, '--module'], { encoding: 'utf8' });
    assert.equal(wrong.status, 2);
    assert.match(wrong.stderr, /^mt-eval-guest: --module needs a value\nusage:/);
  });

  test("an error a method throws from a timer, or leaves rejected, is logged and the guest serves on", async () => {
    const driver = guest(['--module', moduleFile('stray.js', `
export async function translate(entries) {
  setTimeout(() => { throw new Error('thrown in a timer'); }, 5);
  Promise.reject(new Error('left rejected'));
  return entries.map((e) => ({ id: e.id, predicted: e.source }));
}
`)]);
    await driver.initialize();
    driver.translate(2, [{ id: 'a', source: 'one' }]);
    assert.equal((await driver.next()).result.results[0].predicted, 'one');
    await new Promise((resolve) => setTimeout(resolve, 100)); // the timer has thrown
    driver.translate(3, [{ id: 'b', source: 'two' }]);
    assert.equal((await driver.next()).result.results[0].predicted, 'two');
    assert.deepEqual(await driver.close(), { code: 0, signal: null });
    assert.match(driver.stderr, /uncaught exception in the method: Error: thrown in a timer\n {4}at /);
    assert.match(driver.stderr, /unhandled rejection in the method: Error: left rejected/);
  });

  test('a module without translate fails initialize with -32603, then exits 1', async () => {
    const driver = guest(['--module', moduleFile('empty.js', 'export const name = "nothing";\n')]);
    const init = await driver.initialize();
    assert.equal(init.error.code, -32603);
    assert.match(init.error.message, /does not export translate/);
    driver.translate(2, [{ id: 'a', source: 'x' }]);
    assert.equal((await driver.next()).error.code, -32006);
    assert.deepEqual(await driver.close(), { code: 1, signal: null });
  });

  test('a module whose translate is not a function says what it is, not that it is missing', async () => {
    for (const [code, said] of [['export const translate = "hello";\n', /exports translate, but it is not a function: it is "hello"/],
      ['export const translate = { run() {} };\n', /exports translate, but it is not a function: it is an object/],
      ['module.exports = { translate: 42 };\n', /exports translate, but it is not a function: it is 42/]]) {
      const driver = guest(['--module', moduleFile(code.startsWith('module') ? 'not-a-function.cjs' : 'not-a-function.mjs', code)]);
      const init = await driver.initialize();
      assert.equal(init.error.code, -32603);
      assert.match(init.error.message, said);
      assert.doesNotMatch(init.error.message, /does not export/);
      await driver.close();
    }
  });

  test('a failing methodCard() gives a null card at initialize and -32007 when asked', async () => {
    const driver = guest(['--module', moduleFile('cardless.js', `export async function translate() { return []; }
      export function methodCard() { throw new RangeError('no card today'); }`)]);
    assert.equal((await driver.initialize()).result.card, null);
    driver.send({ jsonrpc: '2.0', id: 2, method: 'method_card', params: {} });
    const answer = await driver.next();
    assert.deepEqual(answer.error, { code: -32007, message: 'RangeError: no card today', data: { type: 'RangeError' } });
    await driver.close();
  });

  test('a plugin directory uses its manifest\'s id and node_entry', async () => {
    const directory = join(scratch, 'Plugin Dir');
    mkdirSync(directory);
    writeFileSync(join(directory, 'method.json'), JSON.stringify({ name: 'Plugin', node_entry: 'main.js' }));
    writeFileSync(join(directory, 'main.js'), 'export default { translate: async (entries) => entries.map((e) => ({ id: e.id, predicted: "ok" })) };\n');
    const driver = guest([directory]);
    assert.deepEqual((await driver.initialize()).result.method, { name: 'Plugin', method_id: 'plugin-dir' });
    driver.translate(1, [{ id: 'a', source: 'x' }]);
    assert.equal((await driver.next()).result.results[0].predicted, 'ok');
    await driver.close();
  });

  test('a host that checked the plugin names the module, its name, id and requests; the files are not read', async () => {
    const directory = join(scratch, 'named');
    mkdirSync(directory);
    writeFileSync(join(directory, 'method.json'), '{ this is not read }');
    const main = join(directory, 'main.js');
    writeFileSync(main, 'export async function translate(entries) { return entries.map((e) => ({ id: e.id, predicted: "ok" })); }\n'
      + 'export async function decide(rows) { return rows.map((r) => ({ id: r.id, answers: {} })); }\n');
    const driver = guest(['--module', main, '--name', 'Named Method', '--method-id', 'named-method', '--implements', 'translate']);
    const { result } = await driver.initialize();
    assert.deepEqual(result.method, { name: 'Named Method', method_id: 'named-method' });
    assert.deepEqual(result.implements, ['translate']);
    driver.translate(1, [{ id: 'a', source: 'x' }]);
    assert.equal((await driver.next()).result.results[0].predicted, 'ok');
    await driver.close();
    const bare = guest(['--module', main, '--name', 'Named Method']);
    const named = (await bare.initialize()).result;
    assert.deepEqual(named.method, { name: 'Named Method', method_id: 'named-method' });
    assert.deepEqual(named.implements, ['translate', 'decide']);
    await bare.close();
  });

  test('command-line mistakes exit 2 with a message', () => {
    const run = (...args) => spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', input: '' });
    const python = join(scratch, 'python-only');
    mkdirSync(python);
    writeFileSync(join(python, 'method.json'), JSON.stringify({ name: 'Py', entry_point: 'pipeline:Py' }));
    for (const [args, pattern] of [
      [[], /give either a plugin directory or --module FILE.js/],
      [['a', 'b'], /give either a plugin directory/],
      [['--frobnicate'], /unknown option --frobnicate/],
      [['--module'], /--module needs a value/],
      [['--max-line-bytes', 'lots', reverseFixture], /--max-line-bytes must be a positive integer/],
      ...['0x10', '1e3', ' 16', '', '0', '16.0'].map((limit) => [['--max-line-bytes', limit, reverseFixture],
        new RegExp(`--max-line-bytes must be a positive integer of bytes \\(e\\.g\\. 1048576\\), got ${JSON.stringify(limit).replace('.', '\\.')}`)]),
      [[join(scratch, 'missing-dir')], /no such directory/],
      [['--module', join(scratch, 'missing.js')], /missing.js: no such file/],
      [['--module', reverseFixture], /reverse is a directory, not a module: give the method's module file \(its translate\.js\), or serve the plugin directory as one \(`mt-eval-guest DIR`, without --module\)$/m],
      [[python], /no "node_entry": this plugin does not run on Node\n\s+fix: serve it with `mt-eval serve DIR`/],
      [[reverseFixture, '--name', 'X'], /--name goes with --module \(a plugin directory names its method\)/],
      [['--module', join(nodePackage, 'index.js'), '--name', ''], /--name is empty: give a value, or leave --name out/],
      [['--module', join(nodePackage, 'index.js'), '--method-id=  '], /--method-id is empty: give a value/],
      [['--module', join(nodePackage, 'index.js'), '--implements', ''], /--implements is empty: give a value/],
      [['--module', join(nodePackage, 'index.js'), '--implements', 'translate,judge'],
        /--implements: "judge" is not one of translate, decide/],
    ]) {
      const result = run(...args);
      assert.equal(result.status, 2, `${args.join(' ')}: exit ${result.status}`);
      assert.match(result.stderr, pattern);
      assert.equal(result.stdout, '');
    }
    const help = run('--help');
    assert.equal(help.status, 0);
    assert.match(help.stdout, /usage: mt-eval-guest DIR/);
  });

  test('the reverse fixture serves under the documented command', async () => {
    const driver = new LineDriver(nodeGuestCommand);
    drivers.push(driver);
    assert.equal((await driver.initialize()).result.method.method_id, 'reverse');
    await driver.close();
  });
});
