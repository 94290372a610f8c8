// Two processes, one champollion project (issue 20): real concurrent mt-eval-locales processes, a holder
// killed with SIGKILL, --wait, and the same lock honoured by Python's `mt-eval locales`.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';

import { acquireProjectLock, ProjectBusyError } from '../index.js';
import { makeProject } from './helpers/champollion.js';
import { nodePackage, pythonGuest, waitFor } from './helpers/guests.js';

const BIN = join(nodePackage, 'bin', 'mt-eval-locales.js');
const BUSY = /is in use by pid (\d+) \(([^,]+), started (\d{4}-\d\d-\d\dT[\d:]+\+00:00)\)/;
const SOURCE = { greeting: 'Hello', bye: 'Goodbye', thanks: 'Thank you', home: 'Home' };
const python = pythonGuest();

function project(plugin = 'upper') {
  return makeProject({
    config: { version: 3, inputLocale: 'en', localesDir: 'locales', pairs: { 'en:es': { methodPlugin: plugin, batchSize: 1 } } },
    files: { 'locales/en/common.json': SOURCE },
    plugins: [plugin],
  });
}

/** Start a command; resolves {code, signal, stdout, stderr} when it ends. */
function launch(command, env, { detached = false } = {}) {
  const child = spawn(command[0], command.slice(1), { env, detached, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => { stdout += chunk; });
  child.stderr.on('data', (chunk) => { stderr += chunk; });
  child.done = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal, stdout, stderr })));
  return child;
}

const nodeLocales = (p, ...extra) => [process.execPath, BIN, '--config', p.root, '--quiet', ...extra];
const pythonLocales = (p, ...extra) => [python.command[0], 'locales', '--config', p.root, '--quiet', ...extra];
const envFor = (p, sleepS) => ({ ...process.env, CHAMPOLLION_FIXTURE_LOG: p.log, CHAMPOLLION_FIXTURE_SLEEP: String(sleepS) });

test('a second mt-eval-locales on a project refuses at once, naming the holder; each string is sent once', async (t) => {
  const p = project();
  t.after(p.cleanup);
  const env = envFor(p, 3);
  const holder = launch(nodeLocales(p), env);
  assert.ok(await waitFor(() => p.calls().length > 0, 20_000), 'the holder never called its method');
  const began = Date.now();
  const second = await launch(nodeLocales(p), env).done;
  assert.ok(Date.now() - began < 10_000);
  assert.equal(second.code, 1, second.stderr);
  const found = second.stderr.match(BUSY);
  assert.ok(found, second.stderr);
  assert.equal(Number(found[1]), holder.pid);
  assert.equal(found[2], 'mt-eval-locales');
  assert.match(second.stderr, /give --wait to wait/);
  assert.equal((await holder.done).code, 0);
  assert.deepEqual(p.calls().flatMap((call) => call.sources).sort(), Object.values(SOURCE).sort());
});

test('a holder killed with SIGKILL frees the project at once', async (t) => {
  const p = project();
  t.after(p.cleanup);
  const holder = launch(nodeLocales(p), envFor(p, 30), { detached: true });
  assert.ok(await waitFor(() => p.calls().length > 0, 20_000));
  process.kill(-holder.pid, 'SIGKILL');
  await holder.done;
  const began = Date.now();
  const next = await launch(nodeLocales(p), envFor(p, 0)).done;
  assert.equal(next.code, 0, next.stderr);
  assert.doesNotMatch(next.stderr, /in use/);
  assert.ok(Date.now() - began < 10_000);
  assert.deepEqual(Object.keys(p.json('locales/es/common.json')).sort(), Object.keys(SOURCE).sort());
});

test('--wait waits for the holder, then finds nothing left to send; a bounded wait gives up', async (t) => {
  const p = project();
  t.after(p.cleanup);
  const env = envFor(p, 2);
  const holder = launch(nodeLocales(p), env);
  assert.ok(await waitFor(() => p.calls().length > 0, 20_000));
  const bounded = await launch(nodeLocales(p, '--wait', '0.2'), env).done;
  assert.equal(bounded.code, 1);
  assert.match(bounded.stderr, /waiting for it \(--wait\)/);
  assert.match(bounded.stderr, /after waiting 0\.2 s for it\. Let it finish, then run again, or give a longer --wait\n/);
  assert.doesNotMatch(bounded.stderr, /give --wait to wait/);
  const waiting = await launch(nodeLocales(p, '--wait', '--json'), env).done;
  assert.equal((await holder.done).code, 0);
  assert.equal(waiting.code, 0, waiting.stderr);
  assert.equal(JSON.parse(waiting.stdout).locales[0].sent, 0);
  assert.equal(p.calls().length, Object.keys(SOURCE).length);
});

test('acquireProjectLock: the same lock from one process is refused to a second holder', async (t) => {
  const p = project();
  t.after(p.cleanup);
  const lock = await acquireProjectLock(join(p.root, 'locales'), { command: 'test' });
  await assert.rejects(acquireProjectLock(join(p.root, 'locales'), { command: 'again' }),
    (error) => error instanceof ProjectBusyError && error.holder.pid === process.pid && error.holder.command === 'test');
  await lock.release();
  await (await acquireProjectLock(join(p.root, 'locales'), { command: 'again' })).release();
});

for (const holderSide of ['node', 'python']) {
  test(`a ${holderSide} holder keeps the other runtime out, and SIGKILL frees it`, { skip: python.skip }, async (t) => {
    const plugin = holderSide === 'node' ? 'upper' : 'rot13';
    const p = project(plugin);
    t.after(p.cleanup);
    const holderCommand = holderSide === 'node' ? nodeLocales(p) : pythonLocales(p);
    const otherCommand = holderSide === 'node' ? pythonLocales(p) : nodeLocales(p);
    const env = { ...envFor(p, 30), MT_EVAL: python.command[0] };
    const holder = launch(holderCommand, env, { detached: true });
    assert.ok(await waitFor(() => p.calls().length > 0, 30_000), 'the holder never called its method');
    const other = await launch(otherCommand, env).done;
    assert.equal(other.code, 1, other.stderr);
    const found = other.stderr.match(BUSY);
    assert.ok(found, other.stderr);
    assert.equal(Number(found[1]), holder.pid);
    assert.equal(found[2], holderSide === 'node' ? 'mt-eval-locales' : 'mt-eval locales');
    process.kill(-holder.pid, 'SIGKILL');
    await holder.done;
    const after = await launch(otherCommand, { ...env, CHAMPOLLION_FIXTURE_SLEEP: '0' }).done;
    assert.equal(after.code, 0, after.stderr);
  });
}

test('a wait that is not a number of seconds is refused at once (NaN waited for ever)', async () => {
  for (const waitS of [Number.NaN, -1, 'soon']) {
    await assert.rejects(acquireProjectLock('/tmp', { waitS }), /^TypeError: waitS must be a number of seconds, 0 or more/);
  }
});
