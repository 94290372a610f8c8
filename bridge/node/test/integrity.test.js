// The Node host against misbehaving methods (issue cases 10.2–10.5, 10.9, 10.12): each entry keeps its
// own result, every failure is visible, nothing hangs. The reverse fixture (tests/fixtures/reverse) raises,
// exits, blocks its event loop or hangs on the sources that ask it to, the same in Python and JavaScript;
// it runs here as a Node guest, as a Python guest (`mt-eval serve`), and in this process (loadMethodPlugin).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, describe, test } from 'node:test';

import { loadMethodPlugin, MethodLoadError, startGuest } from '../index.js';
import { main } from '../lib/champollion/cli.js';
import { captureStream, makeProject } from './helpers/champollion.js';
import { isRunning, nodePackage, pythonGuest, recordingLogger, repo } from './helpers/guests.js';

const MISBEHAVING = join(repo, 'tests', 'fixtures', 'reverse');
const entries = (...sources) => sources.map((source, i) => ({ id: `e${i}`, source }));
const config = (timeoutS = 30) => ({ source_lang: 'eng', target_lang: 'spa', timeout_s: timeoutS });
const reversed = (source) => `spa:${[...source].reverse().join('')}`;
const expected = (sources, failing) => sources.map((s, i) => (failing.includes(i) ? null : reversed(s)));
const python = pythonGuest();
const mtEval = python.command?.[0];

const guests = {
  node: { command: [process.execPath, join(nodePackage, 'bin', 'mt-eval-guest.js'), MISBEHAVING] },
  python: python.skip ? { skip: python.skip } : { command: [mtEval, 'serve', MISBEHAVING] },
};
const started = [];

async function start(runtime, options = {}) {
  const { logger } = recordingLogger();
  const guest = await startGuest(guests[runtime].command, {
    config: config(), cwd: repo, logger, closeStepMs: 300, cancelGraceMs: 300, ...options,
  });
  started.push(guest);
  return guest;
}

after(async () => {
  await Promise.all(started.map((guest) => guest.close()));
});

for (const runtime of ['node', 'python']) {
  describe(`the Node host with the ${runtime} guest`, { skip: guests[runtime].skip }, () => {
    test('an entry that raises fails alone: the request is split until it is found (10.2)', async () => {
      const guest = await start(runtime);
      const sources = ['one', 'two', 'three', '!raise', 'five', 'six'];
      const results = await guest.translate(entries(...sources));
      assert.deepEqual(results.map((r) => r.predicted), expected(sources, [3]));
      assert.match(results[3].error, /asked to raise/);
      assert.equal(guest.restarts, 0);
      await guest.close();
    });

    test('a guest that exits mid-batch is restarted; only the culprit fails, again and again (10.3)', async () => {
      const guest = await start(runtime);
      for (let round = 0; round < 4; round++) {
        const sources = ['one', 'two', '!exit', 'four'];
        const results = await guest.translate(entries(...sources));
        assert.deepEqual(results.map((r) => r.predicted), expected(sources, [2]));
        if (runtime === 'node') assert.match(results[2].error, /exited with code 3[\s\S]*exiting on purpose/);
        else assert.match(results[2].error, /called sys\.exit\(3\) \(pipeline\.py:30\)/);
      }
      if (runtime === 'node') assert.ok(guest.restarts >= 4, `restarts: ${guest.restarts}`);
      await guest.close();
    });

    test('a guest whose event loop is blocked is killed and replaced; later entries are kept (10.4)', async () => {
      const guest = await start(runtime);
      const firstPid = guest.pid;
      const began = Date.now();
      const sources = ['one', '!block 60', 'three'];
      const results = await guest.translate(entries(...sources), config(0.5));
      assert.ok(Date.now() - began < 15_000, `took ${Date.now() - began} ms`);
      assert.deepEqual(results.map((r) => r.predicted), expected(sources, [1]));
      assert.match(results[1].error, /translate request got no answer or progress within 0\.5 s/);
      assert.equal(isRunning(firstPid), false);
      assert.deepEqual((await guest.translate(entries('later'))).map((r) => r.predicted), [reversed('later')]);
      await guest.close();
    });

    test('calls stuck behind one that blocked the guest are sent again, not failed with it', async () => {
      // (one entry a call, all in flight at once: they time out one by one, and the last is then alone in flight)
      const guest = await start(runtime);
      const sources = ['one', '!block 60', 'three', 'four', 'five'];
      const results = (await Promise.all(entries(...sources).map((e) => guest.translate([e], config(0.5))))).flat();
      assert.deepEqual(results.map((r) => r.predicted), expected(sources, [1]), results.map((r) => r.error).join(' | '));
      await guest.close();
    });

    test('calls in flight when the host closes fail as closed, whether the guest exits or answers them cancelled', async () => {
      const guest = await start(runtime);
      const running = guest.translate(entries('!hang', '!hang'), config(30));
      await new Promise((resolve) => setTimeout(resolve, 300)); // (on the wire)
      await guest.close();
      // (the Python guest answers them "cancelled" as it shuts down: that had been their error)
      for (const result of await running) assert.match(result.error, /^the guest was closed/);
    });
  });
}

test('close() of a Python plugin fails its calls in flight as the method plugin closed, as in-process', { skip: guests.python.skip }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'mt-eval-close-'));
  writeFileSync(join(dir, 'pipeline.py'), readFileSync(join(MISBEHAVING, 'pipeline.py')));
  writeFileSync(join(dir, 'method.json'), JSON.stringify({ name: 'Reverse', entry_point: 'pipeline:ReverseMethod', dependencies: [] }));
  const plugin = await loadMethodPlugin(dir, { mtEval });
  assert.equal(plugin.runtime, 'python');
  await plugin.start(config());
  const call = plugin.translate(entries('!hang', '!hang'), { ...config(), batch_size: 1 });
  setTimeout(() => plugin.close(), 300);
  assert.deepEqual((await call).map((r) => r.error), ['the method plugin was closed', 'the method plugin was closed']);
});

test('close() of a Python plugin fails the batches of a call not yet sent, as in-process, rather than rejecting the call', { skip: guests.python.skip }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'mt-eval-close-'));
  writeFileSync(join(dir, 'pipeline.py'), readFileSync(join(MISBEHAVING, 'pipeline.py')));
  writeFileSync(join(dir, 'method.json'), JSON.stringify({ name: 'Reverse', entry_point: 'pipeline:ReverseMethod', dependencies: [] }));
  const plugin = await loadMethodPlugin(dir, { mtEval });
  await plugin.start(config());
  // One batch at a time: the second is sent after close() began (before: the call rejected, "the guest is closed").
  const call = plugin.translate(entries('!hang', 'ok'), { ...config(), batch_size: 1, concurrency: 1 });
  setTimeout(() => plugin.close(), 300);
  assert.deepEqual((await call).map((r) => r.error), ['the method plugin was closed', 'the method plugin was closed']);
  await assert.rejects(plugin.translate(entries('x'), config()), /the method plugin is closed/);
});

describe('loadMethodPlugin runs translate.js in this process', () => {
  test('a call that throws is split until the entry that throws is found (10.2)', async () => {
    const plugin = await loadMethodPlugin(MISBEHAVING);
    const sources = ['one', 'two', '!raise', 'four', 'five'];
    const results = await plugin.translate(entries(...sources), { ...config(), batch_size: 8 });
    assert.deepEqual(results.map((r) => r.predicted), expected(sources, [2]));
    assert.equal(results[2].error, 'the method failed: Error: asked to raise');
    await plugin.close();
  });

  test('close() fails the calls in flight at once, as a guest\'s close does (they waited out timeout_s)', async () => {
    const plugin = await loadMethodPlugin(MISBEHAVING);
    const began = Date.now();
    const call = plugin.translate([{ id: 'a', source: '!hang' }, { id: 'b', source: 'ok' }], { ...config(), timeout_s: 30 });
    setTimeout(() => plugin.close(), 200);
    const results = await call;
    assert.ok(Date.now() - began < 3_000, `${Date.now() - began} ms`);
    assert.deepEqual(results.map((r) => r.error), ['the method plugin was closed', 'the method plugin was closed']);
    await assert.rejects(plugin.translate([{ id: 'c', source: 'x' }]), /the method plugin is closed/);
  });

  test('timeout_s applies: a call that never resolves fails its entry, not the run (10.12)', async () => {
    const plugin = await loadMethodPlugin(MISBEHAVING);
    const began = Date.now();
    const sources = ['one', '!hang', 'three'];
    const results = await plugin.translate(entries(...sources), { ...config(0.3), batch_size: 3 });
    assert.ok(Date.now() - began < 5000, `took ${Date.now() - began} ms`);
    assert.deepEqual(results.map((r) => r.predicted), expected(sources, [1]));
    assert.equal(results[1].error, 'timed out after 0.3 s (0.3 s per entry)');
    await plugin.close();
  });

  test('a call that times out is sent again one entry at a time, not in halves that each wait again', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mt-eval-calls-'));
    writeFileSync(join(dir, 'method.json'), JSON.stringify({ name: 'Calls', node_entry: 'translate.js', dependency_class: 'S', dependencies: [] }));
    writeFileSync(join(dir, 'translate.js'), `export const calls = [];
      export async function translate(entries) {
        calls.push(entries.map((e) => e.source));
        if (entries.some((e) => e.source === 'HANG')) await new Promise(() => {});
        return entries.map((e) => ({ id: e.id, predicted: e.source.toUpperCase() }));
      }`);
    const plugin = await loadMethodPlugin(dir);
    const sources = ['a', 'b', 'c', 'HANG', 'e', 'f'];
    const results = await plugin.translate(entries(...sources), { ...config(0.2), batch_size: 8 });
    assert.deepEqual(results.map((r) => r.predicted), ['A', 'B', 'C', null, 'E', 'F']);
    assert.equal(results[3].error, 'timed out after 0.2 s (0.2 s per entry)');
    const { calls } = await import(join(dir, 'translate.js'));
    assert.deepEqual(calls, [sources, ...sources.map((s) => [s])]);
    await plugin.close();
  });

  test('a translate.js blocking the event loop ends the process with the fix instead of hanging (10.5)', async () => {
    const script = `import { loadMethodPlugin } from ${JSON.stringify(join(nodePackage, 'index.js'))};
      const plugin = await loadMethodPlugin(${JSON.stringify(MISBEHAVING)});
      await plugin.translate([{ id: 'a', source: '!block 60' }], { source_lang: 'eng', target_lang: 'spa', timeout_s: 0.3, batch_size: 1 });
      console.log('not reached');`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    let stdout = '';
    child.stderr.on('data', (chunk) => { stderr += chunk; });
    child.stdout.on('data', (chunk) => { stdout += chunk; });
    const began = Date.now();
    const [code, signal] = await new Promise((resolve) => child.on('exit', (...args) => resolve(args)));
    assert.ok(Date.now() - began < 20_000, `took ${Date.now() - began} ms`);
    assert.equal(signal, 'SIGKILL', `exit ${code}`);
    assert.equal(stdout, '');
    assert.match(stderr, /the method reverse \(.*reverse\) blocked the event loop for \d+\.\d s in a call of the method/);
    assert.match(stderr, /Fix: make its translate\(\) or decide\(\) asynchronous/);
  });
});

describe('a plugin that cannot start fails once, at once, with the fix (10.9)', () => {
  const plugin = (files, { entry = 'translate.js', type } = {}) => {
    const directory = mkdtempSync(join(tmpdir(), 'integrity-plugin-'));
    for (const [name, text] of Object.entries(files)) {
      mkdirSync(dirname(join(directory, name)), { recursive: true });
      writeFileSync(join(directory, name), text);
    }
    writeFileSync(join(directory, 'method.json'), JSON.stringify({ name: 'P', node_entry: entry, dependencies: [] }));
    if (type) writeFileSync(join(directory, 'package.json'), JSON.stringify({ type }));
    return directory;
  };
  const cjs = "const s = require('./s.cjs');\nmodule.exports = { async translate(e) { return e.map((x) => ({ id: x.id, predicted: 'cjs' + s })); } };\n";

  test('a syntax error names file:line and shows the line; later calls fail alike without a retry', async () => {
    const loaded = await loadMethodPlugin(plugin({ 'translate.js': 'export async function translate(e) {\n  return [\n    1 +;\n}\n' },
      { type: 'module' }));
    const error = await loaded.start(config()).catch((e) => e);
    assert.ok(error instanceof MethodLoadError);
    assert.match(error.message, /^translate\.js:3: SyntaxError: Unexpected token ';'\n {4}\s*1 \+;\n/);
    assert.match(error.message, /fix: correct the syntax there/);
    await assert.rejects(loaded.translate(entries('a'), config()), (e) => e.message === error.message);
    await loaded.close();
  });

  test('a SyntaxError its code throws at load (JSON.parse of a file) is where it was thrown, not a syntax error', async () => {
    const code = "import { readFileSync } from 'node:fs';\n"
      + "const settings = JSON.parse(readFileSync(new URL('./settings.json', import.meta.url), 'utf8'));\n"
      + 'export async function translate(e) { return e.map((x) => ({ id: x.id, predicted: settings.word })); }\n';
    const loaded = await loadMethodPlugin(plugin({ 'translate.js': code, 'settings.json': '{"word": ' }, { type: 'module' }));
    const error = await loaded.start(config()).catch((e) => e);
    assert.ok(error instanceof MethodLoadError);
    assert.match(error.message, /^translate\.js:2: SyntaxError: .*JSON/);
    assert.match(error.message, /fix: translate\.js threw while it was being loaded; fix the code that runs at load time/);
    assert.doesNotMatch(error.message, /correct the syntax/);
    await loaded.close();
  });

  test('CommonJS in a "type": "module" package is explained; .cjs and untyped packages load either', async () => {
    const wrong = await loadMethodPlugin(plugin({ 'translate.js': cjs, 's.cjs': "module.exports = '!';\n" }, { type: 'module' }));
    await assert.rejects(wrong.start(config()), /translate\.js:1: translate\.js is CommonJS[\s\S]*rename it to translate\.cjs \(and node_entry in method\.json\)/);
    for (const [files, options] of [
      [{ 'translate.cjs': cjs, 's.cjs': "module.exports = '!';\n" }, { entry: 'translate.cjs', type: 'module' }],
      [{ 'translate.js': cjs, 's.cjs': "module.exports = '!';\n" }, {}],
      [{ 'translate.mjs': 'export async function translate(e) { return e.map((x) => ({ id: x.id, predicted: "cjs!" })); }\n' }, { entry: 'translate.mjs' }],
    ]) {
      const loaded = await loadMethodPlugin(plugin(files, options));
      assert.deepEqual((await loaded.translate(entries('a'), config())).map((r) => r.predicted), ['cjs!']);
      await loaded.close();
    }
  });

  test('a .mjs file written as CommonJS, or a .cjs one as an ES module, is told the rename, whatever the package says', async () => {
    const esm = 'export async function translate(e) { return e; }\n';
    for (const [files, options, said] of [
      [{ 'translate.mjs': cjs }, { entry: 'translate.mjs' }, 'translate.mjs:1: translate.mjs is CommonJS (it uses require '
        + 'or module.exports), but Node loads a .mjs file as an ES module\n  fix: rename it to translate.cjs (and node_entry '
        + 'in method.json), or write it as an ES module (import ... from, export ...)'],
      ...[undefined, 'module', 'commonjs'].map((type) => [{ 'translate.cjs': esm }, { entry: 'translate.cjs', type },
        "translate.cjs:1: SyntaxError: Unexpected token 'export'\n    export async function translate(e) { return e; }\n    ^^^^^^\n"
        + '  fix: translate.cjs is an ES module, but Node reads a .cjs file as CommonJS: rename it to translate.mjs (and '
        + 'node_entry in method.json)']),
    ]) {
      const loaded = await loadMethodPlugin(plugin(files, options));
      const error = await loaded.start(config()).catch((e) => e);
      assert.ok(error instanceof MethodLoadError, String(error));
      assert.equal(error.message, said, `with "type": ${options.type}`);
      await loaded.close();
    }
  });

  test('a module importing a directory is told to import its file, not that it threw at load', async () => {
    const loaded = await loadMethodPlugin(plugin({ 'lib/index.js': 'export const x = 1;\n',
      'translate.js': "import { x } from './lib';\nexport async function translate(e) { return []; }\n" }, { type: 'module' }));
    const error = await loaded.start(config()).catch((e) => e);
    assert.ok(error instanceof MethodLoadError, String(error));
    assert.match(error.message, /Directory import '.*\/lib' is not supported/);
    assert.match(error.message, /\n  fix: import the module file, not its directory: an ES module does not resolve a directory to its index\.js \(e\.g\. '\.\/lib\/index\.js'\)$/);
    assert.doesNotMatch(error.message, /threw while it was being loaded/);
    await loaded.close();
  });

  test('a JSON import without its type is told the import attribute, not that it threw at load', async () => {
    const loaded = await loadMethodPlugin(plugin({ 'data/terms.json': '{"a": "b"}\n',
      'translate.js': "import terms from './data/terms.json';\nexport async function translate(e) { return []; }\n" }, { type: 'module' }));
    const error = await loaded.start(config()).catch((e) => e);
    assert.ok(error instanceof MethodLoadError, String(error));
    assert.match(error.message, /^Module ".*\/data\/terms\.json" needs an import attribute of type "json"\n  fix: import a JSON file with its type — import data from '\.\/data\/terms\.json' with \{ type: 'json' \} — or read it with readFileSync and JSON\.parse$/);
    await loaded.close();
  });

  test('an import Node cannot run (.txt, .ts) is named, with what to do instead', async () => {
    for (const [name, fix] of [
      ['words.txt', /^Unknown file extension "\.txt" for .*words\.txt\n  fix: words\.txt is not a module Node can load \(imported by the method\): import JavaScript modules \(\.js, \.mjs or \.cjs\), or read other files with readFileSync$/],
      ['helpers.ts', /\n  fix: helpers\.ts is not a module Node can load \(imported by the method\): compile it to JavaScript \(tsc\) and name the \.js file$/],
    ]) {
      const loaded = await loadMethodPlugin(plugin({ [name]: 'a\n',
        'translate.js': `import './${name}';\nexport async function translate(e) { return []; }\n` }, { type: 'module' }));
      const error = await loaded.start(config()).catch((e) => e);
      assert.ok(error instanceof MethodLoadError, String(error));
      assert.match(error.message, fix);
      await loaded.close();
    }
  });

  test('mt-eval-locales stops at once with the reason, instead of an error per key', async (t) => {
    const project = makeProject({
      config: { version: 3, inputLocale: 'en', localesDir: 'locales', pairs: { 'en:es': { methodPlugin: './broken' } } },
      files: { 'locales/en/a.json': { one: 'One', two: 'Two', three: 'Three' } },
      plugins: [],
    });
    t.after(project.cleanup);
    mkdirSync(join(project.root, 'broken'));
    project.write('broken/method.json', { name: 'Broken', node_entry: 'translate.mjs', dependencies: [] });
    project.write('broken/translate.mjs', 'export const translate = ;\n');
    const stdout = captureStream();
    const stderr = captureStream();
    const status = await main(['--config', project.root, '--quiet'], { stdout, stderr, env: process.env });
    assert.equal(status, 1);
    assert.match(stderr.text(), /^mt-eval-locales: pair en:es: broken \(.*broken\) cannot start: translate\.mjs:1: SyntaxError/);
    assert.equal(stderr.text().split('cannot start').length, 2);
    assert.equal(stdout.text(), '');
  });
});

describe('process.exit() in a translate.js run by loadMethodPlugin', () => {
  // A program (run as its own process) that translates with a plugin whose translate.js calls process.exit(0) for
  // the source "exit"; with "own", the program itself calls process.exit(5) while a call is in flight.
  const run = (how) => {
    const directory = mkdtempSync(join(tmpdir(), 'exit-plugin-'));
    writeFileSync(join(directory, 'method.json'), JSON.stringify({ name: 'Ex', node_entry: 'translate.js', dependencies: [] }));
    writeFileSync(join(directory, 'translate.js'), 'export async function translate(entries) {\n'
      + '  await new Promise((resolve) => setTimeout(resolve, 300));\n'
      + '  return entries.map((e) => { if (e.source === "exit") process.exit(0); return { id: e.id, predicted: e.source.toUpperCase() }; });\n}\n');
    const program = `import { loadMethodPlugin } from ${JSON.stringify(join(nodePackage, 'index.js'))};
const plugin = await loadMethodPlugin(${JSON.stringify(directory)}, { config: { source_lang: 'eng', target_lang: 'spa' } });
if (${JSON.stringify(how)} === 'own') setTimeout(() => process.exit(5), 100);
const results = await plugin.translate([{ id: 'a', source: 'one' }, { id: 'b', source: 'exit' }]);
process.stdout.write(JSON.stringify(results.map((r) => r.error ?? r.predicted)));
await plugin.close();`;
    const child = spawn(process.execPath, ['--input-type=module', '-e', program], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    child.stdout.on('data', (chunk) => { stdout += chunk; });
    return new Promise((resolve) => child.on('exit', (code) => resolve({ code, stdout })));
  };

  test('fails the entry it was called for, not the program (it ended the program with status 0)', async () => {
    const { code, stdout } = await run('method');
    assert.equal(code, 0);
    assert.deepEqual(JSON.parse(stdout), ['ONE', 'the method called process.exit(0): a translate.js returns its results or throws; it does not end the process']);
  });

  test('the program\'s own process.exit() still ends it while a call is in flight', async () => {
    const { code, stdout } = await run('own');
    assert.deepEqual([code, stdout], [5, '']);
  });
});
