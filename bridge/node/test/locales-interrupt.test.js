// Ctrl-C in mt-eval-locales (as in Python's `mt-eval locales`): what was translated is written with its
// lock entries, what was kept and what was not is said, the exit status is 130, and a second run sends
// only the rest; while waiting for the project, nothing was sent. SIGTERM and SIGHUP stop it as Ctrl-C does
// (exit status 143, 129), and a Python guest stuck in a call is ended either way.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { acquireProjectLock } from '../index.js';
import { main } from '../lib/champollion/cli.js';
import { captureStream, makeProject } from './helpers/champollion.js';
import { nodePackage, processesMarked, pythonGuest, waitFor } from './helpers/guests.js';

const BIN = join(nodePackage, 'bin', 'mt-eval-locales.js');
const KEPT = /^mt-eval-locales: interrupted; kept (\d+) keys translated \((\d+) files? written, with their lock entries\); not translated: (\d+) keys of es; not started: fr\. Run the same command again for the rest; what was kept is not sent again$/;
// How the command says it was stopped: Ctrl-C as "interrupted", another signal named, as `mt-eval locales` says it.
const STOPPED = { SIGINT: 'interrupted', SIGTERM: 'interrupted by SIGTERM', SIGHUP: 'interrupted by SIGHUP' };
const keptAfter = (signal) => new RegExp(KEPT.source.replace('interrupted', STOPPED[signal]));

function slowProject() {
  const files = {};
  for (const name of ['a', 'b', 'c']) {
    files[`locales/en/${name}.json`] = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`k${i}`, `${name} text ${i}`]));
  }
  return makeProject({
    config: { version: 3, inputLocale: 'en', pairs: { 'en:es': { methodPlugin: 'upper', batchSize: 2 }, 'en:fr': { methodPlugin: 'upper' } } },
    files, plugins: ['upper'],
  });
}

/** Start mt-eval-locales in its own process group; resolves {code, stdout, stderr} when it ends. */
function launch(project, argv, env) {
  const child = spawn(process.execPath, [BIN, '--config', project.root, '--quiet', ...argv], { env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => { stdout += chunk; });
  child.stderr.on('data', (chunk) => { stderr += chunk; });
  child.done = new Promise((resolve) => child.on('exit', (code) => resolve({ code, stdout: () => stdout, stderr: () => stderr })));
  child.stderrText = () => stderr;
  return child;
}

test('Ctrl-C writes what was translated, says what was kept, exits 130; a second run sends only the rest', async (t) => {
  const project = slowProject();
  t.after(project.cleanup);
  const child = launch(project, ['--json'], { ...process.env, CHAMPOLLION_FIXTURE_LOG: project.log, CHAMPOLLION_FIXTURE_SLEEP: '0.3' });
  assert.ok(await waitFor(() => project.calls().length >= 8, 30_000), 'the method was not called');
  process.kill(-child.pid, 'SIGINT'); // as a terminal does
  const done = await child.done;
  assert.equal(done.code, 130, done.stderr());
  const said = done.stderr().trimEnd().split('\n').at(-1);
  const found = said.match(KEPT);
  assert.ok(found, said);
  const [kept, written, missing] = found.slice(1).map(Number);
  assert.ok(kept >= 8 && kept + missing === 120 && written >= 1, said);
  const report = JSON.parse(done.stdout());
  assert.equal(report.ok, false);
  assert.deepEqual(report.error, { kind: 'interrupted', message: said.replace('mt-eval-locales: ', '') });
  assert.deepEqual(report.locales.map((locale) => locale.locale), ['es']);
  assert.equal(report.locales[0].files.reduce((sum, file) => sum + file.interrupted.length, 0), missing);
  const received = project.calls().filter((call) => call.target === 'spa').flatMap((call) => call.sources).length;
  assert.ok(report.locales[0].sent >= Math.max(kept, received) && received > kept, 'the calls in flight were sent too');
  const lock = project.json('locales/.champollion-lock.json').files;
  let values = 0;
  let files = 0;
  for (const name of ['a', 'b', 'c']) {
    if (!existsSync(join(project.root, `locales/es/${name}.json`))) { // none of its keys was translated: no empty file
      assert.equal(lock[`es/${name}.json`], undefined);
      continue;
    }
    const keys = Object.keys(project.json(`locales/es/${name}.json`));
    assert.ok(keys.length > 0);
    values += keys.length;
    files += 1;
    assert.deepEqual(keys.sort(), Object.keys(lock[`es/${name}.json`]).sort(), 'each value written has its lock entry');
  }
  assert.equal(values, kept);
  assert.equal(files, written);

  const calls = project.calls().length;
  const stdout = captureStream();
  const stderr = captureStream();
  process.env.CHAMPOLLION_FIXTURE_LOG = project.log;
  t.after(() => { delete process.env.CHAMPOLLION_FIXTURE_LOG; });
  assert.equal(await main(['--config', project.root, '--quiet', '--json'], { stdout, stderr, env: process.env }), 0, stderr.text());
  assert.equal(JSON.parse(stdout.text()).locales[0].sent, missing, 'what was kept is not sent again');
  assert.equal(project.calls().slice(calls).filter((call) => call.target === 'spa').flatMap((call) => call.sources).length, missing);
});

test('Ctrl-C while waiting for the project: nothing was sent or written, exit status 130', async (t) => {
  const project = slowProject();
  t.after(project.cleanup);
  const holder = await acquireProjectLock(join(project.root, 'locales'), { command: 'a test' });
  t.after(() => holder.release());
  const child = launch(project, ['--wait', '--json'], { ...process.env, CHAMPOLLION_FIXTURE_LOG: project.log });
  assert.ok(await waitFor(() => child.stderrText().includes('waiting for it (--wait)'), 30_000), child.stderrText());
  process.kill(-child.pid, 'SIGINT');
  const done = await child.done;
  assert.equal(done.code, 130, done.stderr());
  assert.ok(done.stderr().endsWith('mt-eval-locales: interrupted before anything was sent; nothing was written\n'), done.stderr());
  assert.deepEqual(JSON.parse(done.stdout()).error, { kind: 'interrupted', message: 'interrupted before anything was sent; nothing was written' });
  assert.deepEqual(project.calls(), []);
});

// A Python plugin whose translate blocks its guest's event loop for a minute (it says when it starts).
const SLEEPY = {
  '.champollion/methods/sleepy/method.json': { name: 'Sleepy', method_id: 'sleepy', class: 'custom-plugin', description: 'blocks',
    entry_point: 'pipeline:Sleepy', dependency_class: 'S', dependencies: [] },
  '.champollion/methods/sleepy/pipeline.py': 'import os, time\n\n\nclass Sleepy:\n    async def translate(self, entries, config):\n'
    + '        open(os.environ["SLEEPY_STARTED"], "w").close()\n        time.sleep(60)\n        return []\n',
  'locales/en/a.json': { hello: 'Hello', world: 'World' },
};

for (const [signal, status] of [['SIGINT', 130], ['SIGTERM', 143], ['SIGHUP', 129]]) {
  test(`${signal} while a Python guest is stuck in a call: exit status ${status}, the guest is ended`, { skip: pythonGuest().skip }, async (t) => {
    const project = makeProject({ config: { version: 3, inputLocale: 'en', pairs: { 'en:es': { methodPlugin: 'sleepy' } } }, files: SLEEPY, plugins: [] });
    t.after(project.cleanup);
    const marker = randomUUID();
    const started = join(project.root, 'started');
    const child = launch(project, [], { ...process.env, MT_EVAL: pythonGuest().command[0], MT_EVAL_TEST_MARKER: marker, SLEEPY_STARTED: started });
    assert.ok(await waitFor(() => existsSync(started), 30_000), child.stderrText());
    process.kill(child.pid, signal);
    const done = await child.done;
    assert.equal(done.code, status, done.stderr());
    assert.ok(done.stderr().endsWith(`mt-eval-locales: ${STOPPED[signal]}; nothing was translated or written; not translated: 2 keys of es. Run the same command again for the rest\n`), done.stderr());
    assert.deepEqual(readdirSync(join(project.root, 'locales')), ['en']); // no empty es/a.json, no lock file
    assert.ok(await waitFor(() => processesMarked(marker).length === 0, 5_000), `left running: ${processesMarked(marker)}`);
  });
}

// A translate.js that answers at once, with no I/O (as a dictionary lookup does): it never gives the event loop a
// turn of its own, so the run has to, or a signal would wait for the end of the run.
const EAGER = {
  '.champollion/methods/eager/method.json': { name: 'Eager', method_id: 'eager', class: 'custom-plugin', node_entry: 'translate.js',
    supported_pairs: ['eng>spa', 'eng>fra'], dependency_class: 'S', dependencies: [] },
  '.champollion/methods/eager/translate.js': "import { existsSync, writeFileSync } from 'node:fs';\n\n"
    + 'export async function translate(entries) {\n'
    + '  if (!existsSync(process.env.EAGER_STARTED)) writeFileSync(process.env.EAGER_STARTED, "");\n'
    + '  const until = Date.now() + 2;\n  while (Date.now() < until);\n'
    + "  return entries.map((e) => ({ id: e.id, predicted: 'ES ' + e.source }));\n}\n",
  'locales/en/a.json': Object.fromEntries(Array.from({ length: 6000 }, (_, i) => [`k${i}`, `Hello ${i}`])),
};

for (const [signal, status] of [['SIGINT', 130], ['SIGTERM', 143]]) {
  test(`${signal} stops a run whose translate.js answers at once, with no I/O: exit status ${status}, what was translated is kept`, async (t) => {
    const project = makeProject({
      config: { version: 3, inputLocale: 'en', pairs: { 'en:es': { methodPlugin: 'eager', batchSize: 1 }, 'en:fr': { methodPlugin: 'eager' } } },
      files: EAGER, plugins: [],
    });
    t.after(project.cleanup);
    const started = join(project.root, 'started');
    const child = launch(project, [], { ...process.env, EAGER_STARTED: started });
    assert.ok(await waitFor(() => existsSync(started), 30_000), child.stderrText());
    await new Promise((resolve) => setTimeout(resolve, 300));
    const sent = Date.now();
    process.kill(child.pid, signal);
    const done = await child.done;
    assert.equal(done.code, status, done.stderr());
    assert.ok(Date.now() - sent < 3_000, `it took ${Date.now() - sent} ms to stop`);
    const said = done.stderr().trimEnd().split('\n').at(-1);
    const found = said.match(keptAfter(signal));
    assert.ok(found, said);
    const [kept, , missing] = found.slice(1).map(Number);
    assert.ok(kept > 0 && missing > 0 && kept + missing === 6000, said);
    assert.equal(Object.keys(project.json('locales/es/a.json')).length, kept);
    assert.equal(existsSync(join(project.root, 'locales/fr')), false, 'fr was not started');
  });
}

test('keys copied as they are are not said to be translated (as `mt-eval locales` says it)', async () => {
  const { interruptedMessage } = await import('../lib/champollion/report.js');
  const file = (name, fields) => ({ file: name, translated: [], copied: [], interrupted: [], written: false, error: null, ...fields });
  const done = file('a.json', { translated: ['k1', 'k2'], copied: ['url'], written: true });
  const report = { dryRun: false, interrupted: true, notStarted: [], locales: [{ locale: 'es', files: [done, file('b.json', { interrupted: ['k3'] })] }] };
  assert.equal(interruptedMessage(report), 'interrupted; kept 3 keys (2 translated, 1 copied) (1 file written, with their lock entries); '
    + 'not translated: 1 key of es. Run the same command again for the rest; what was kept is not sent again');
  done.copied = [];
  assert.match(interruptedMessage(report), /^interrupted; kept 2 keys translated \(1 file written/);
});
