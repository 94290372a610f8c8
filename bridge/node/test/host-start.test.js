// startGuest refusing what cannot be a guest, or a start that does not complete: bad arguments before anything is
// spawned, a guest that never answers initialize, exits during it, or whose start is abandoned; no process is left.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { GuestStartError, startGuest } from '../index.js';
import { isRunning, nodeGuestCommand, repo, testGuest } from './helpers/guests.js';

const misbehaving = (mode) => [process.execPath, testGuest('misbehaving.js'), mode];

describe('startGuest failures', () => {
  test('a guest that never answers initialize is killed after startTimeoutMs', async () => {
    const began = Date.now();
    const error = await startGuest(misbehaving('no-initialize'), { startTimeoutMs: 500, closeStepMs: 300, logger: {} })
      .then(() => null, (e) => e);
    assert.ok(error instanceof GuestStartError, `expected GuestStartError, got ${error}`);
    assert.match(error.message, /did not answer initialize within 0\.5 s \(a guest answers initialize as soon as its method is loaded; see its stderr\)/);
    assert.match(error.message, /guest stderr \(last lines\):\n\s+booting, pid \d+/);
    assert.ok(Date.now() - began < 3000);
    const pid = Number(/booting, pid (\d+)/.exec(error.message)[1]);
    assert.equal(isRunning(pid), false, `guest ${pid} still running`);
  });

  test('aborting options.signal abandons a start under way: the process is ended and startGuest rejects', async () => {
    const stop = new AbortController();
    setTimeout(() => stop.abort(), 300);
    const began = Date.now();
    const error = await startGuest(misbehaving('no-initialize'), { signal: stop.signal, closeStepMs: 300, logger: {} })
      .then(() => null, (e) => e);
    assert.ok(error instanceof GuestStartError, `expected GuestStartError, got ${error}`);
    assert.match(error.message, /^guest `.*no-initialize` was not started: its start was abandoned$/);
    assert.ok(Date.now() - began < 3000, `took ${Date.now() - began} ms (the start limit is 30 s)`);
    assert.match(error.cause.message, /killed by SIGTERM|exited/);
    await assert.rejects(startGuest(nodeGuestCommand, { signal: stop.signal, logger: {} }), /its start was abandoned/);
    await assert.rejects(startGuest(nodeGuestCommand, { signal: 'stop' }), /options\.signal must be an AbortSignal, got "stop"/);
  });

  test('a guest that exits during initialize is reported with its stderr, once', async () => {
    const warned = [];
    await assert.rejects(startGuest(misbehaving('exit-on-init'), { logger: { warn: (m) => warned.push(m) } }), (error) => {
      assert.ok(error instanceof GuestStartError);
      assert.match(error.message, /stopped before answering initialize: the guest exited with code 5/);
      assert.match(error.message, /cannot start: missing model file/);
      assert.equal(error.exitCode, 5);
      return true;
    });
    // (the exit had also been logged as a warning of its own: "the guest exited with code 5 (pid N)")
    assert.deepEqual(warned, []);
  });

  test('a refused initialize is reported with the guest\'s error', async () => {
    await assert.rejects(startGuest(misbehaving('refuse-init'), { closeStepMs: 300, logger: {} }),
      /refused initialize: unsupported protocol version \(error -32005\)/);
  });

  // (as the Python host refuses them: "guest X sent an invalid initialize result: …")
  for (const [result, said] of [
    [{ method: null }, '$.method: expected an object, got null'],
    [{ implements: 'translate' }, '$.implements: expected an array of strings, got the string "translate"'],
    [{ capabilities: { max_concurrency: '4' } }, '$.capabilities.max_concurrency: expected an integer, got the string "4"'],
    [{ card: [1] }, '$.card: expected an object, got an array'],
    [{ protocol_version: 'mt-eval-bridge/9' }, 'protocol_version "mt-eval-bridge/9" is not one this host offered (mt-eval-bridge/1)'],
  ]) {
    test(`an initialize result that is not one (${JSON.stringify(result)}) is refused, naming what is wrong`, async () => {
      const command = [...misbehaving('init-result'), JSON.stringify(result)];
      await assert.rejects(startGuest(command, { closeStepMs: 300, logger: {} }), (error) => {
        assert.ok(error instanceof GuestStartError, String(error));
        assert.equal(error.message, `guest \`${command.join(' ')}\` sent an invalid initialize result: ${said}`);
        return true;
      });
    });
  }

  test('a command that cannot be spawned is reported', async () => {
    await assert.rejects(startGuest(['/no/such/guest-program'], { logger: {} }),
      /guest `\/no\/such\/guest-program` cannot start: there is no program \/no\/such\/guest-program \(give its full path/);
  });

  test('a working directory that is not there is named, not blamed on the program', async () => {
    await assert.rejects(startGuest([process.execPath, '-e', '0'], { cwd: '/no/such/directory', logger: {} }),
      (error) => {
        assert.match(error.message, /cannot start: its working directory \/no\/such\/directory does not exist or is not a directory \(the cwd option\)/);
        assert.equal(error.spawnError, 'ENOENT');
        return true;
      });
  });

  test('bad arguments are rejected before anything is spawned', async () => {
    await assert.rejects(startGuest([]), TypeError);
    await assert.rejects(startGuest(nodeGuestCommand, { startTimeoutMs: -1 }), /startTimeoutMs must be a positive number/);
    for (const [options, said] of [
      [{ startTimeoutMs: NaN }, /options\.startTimeoutMs must be a positive number, got NaN/],
      [{ restartBudget: { restarts: 'abc' } }, /options\.restartBudget\.restarts must be a whole number of 0 or more, got "abc"/],
      [{ restartBudget: { restarts: -1 } }, /options\.restartBudget\.restarts must be a whole number of 0 or more, got -1/],
      [{ restartBudget: 3 }, /options\.restartBudget must be an object \(\{restarts, windowMs\}\), got 3/],
      [{ maxLineBytes: 1.5 }, /options\.maxLineBytes must be a whole number of bytes above 0, got 1\.5/],
      [{ cwd: 7 }, /options\.cwd must be a directory path \(a string\), got 7/],
      [{ env: 'PATH=/bin' }, /options\.env must be an object of environment variables/],
      [{ requestTimeout: 5_000 }, /options\.requestTimeout is not an option of startGuest \(did you mean requestTimeoutMs\?\)/],
      [{ restartBudget: { max: 5 } }, /options\.restartBudget\.max is not a field of restartBudget; its fields are restarts, windowMs/],
      [{ logger: console.log }, /options\.logger must be an object with debug, info, warn and error methods \(console is one\)/],
      [{ logger: 5 }, /options\.logger must be an object with debug, info, warn and error methods/],
    ]) {
      await assert.rejects(startGuest(nodeGuestCommand, options), (error) => {
        assert.ok(error instanceof TypeError, `${JSON.stringify(options)}: ${error}`);
        assert.match(error.message, said);
        return true;
      });
    }
  });

  test('a config no call could run with is refused as translate() and decide() refuse it, before anything is spawned', async (t) => {
    const scratch = mkdtempSync(join(tmpdir(), 'mt-eval-config-'));
    t.after(() => rmSync(scratch, { recursive: true, force: true }));
    const spawned = join(scratch, 'spawned');
    // (a program that says it ran, then serves the reverse fixture, which translates and decides)
    const marking = ['/bin/sh', '-c', 'echo $$ > "$0"; exec "$@"', spawned, ...nodeGuestCommand];
    const pair = { source_lang: 'eng', target_lang: 'spa' };
    for (const [config, message] of [
      ['eng-spa', 'invalid config: expected an object, got the string "eng-spa"'],
      [[pair], 'invalid config: expected an object, got an array'],
      [{ ...pair, batch_size: 0 }, 'invalid config: $.batch_size: must be >= 1, got 0'],
      [{ ...pair, temperature: 3 }, 'invalid config: $.temperature: must be <= 2, got 3'],
      [{ ...pair, temprature: 0.3 }, 'invalid config: $.temprature: unknown field "temprature"'],
      [{ source_lang: 'English', target_lang: 'spa' }, 'invalid config: $.source_lang: "English" is not a language code'],
    ]) {
      await assert.rejects(startGuest(marking, { config, logger: {} }), (error) => {
        assert.ok(error instanceof TypeError, `${JSON.stringify(config)}: ${error}`);
        assert.equal(error.message, message);
        return true;
      });
      assert.equal(existsSync(spawned), false, `${JSON.stringify(config)} spawned the guest`);
    }
    // a guest that decides takes a config without the language pair, as decide() does
    const guest = await startGuest(marking, { config: { temperature: 0 }, logger: {}, closeStepMs: 500 });
    await guest.close();
    assert.equal(existsSync(spawned), true);
  });

  test('a config without the language pair fails the start of a guest that only translates, and the guest is ended', async (t) => {
    const scratch = mkdtempSync(join(tmpdir(), 'mt-eval-config-'));
    t.after(() => rmSync(scratch, { recursive: true, force: true }));
    const pidFile = join(scratch, 'pid');
    const translating = [...nodeGuestCommand.slice(0, 2), join(repo, 'examples', 'termbase-eng-spa')];
    const command = ['/bin/sh', '-c', 'echo $$ > "$0"; exec "$@"', pidFile, ...translating];
    await assert.rejects(startGuest(command, { config: { temperature: 0 }, cwd: repo, logger: {}, closeStepMs: 500 }), (error) => {
      assert.ok(error instanceof TypeError, String(error));
      assert.equal(error.message, 'invalid config: $.source_lang: required field "source_lang" is missing');
      return true;
    });
    const pid = Number(readFileSync(pidFile, 'utf8'));
    assert.equal(isRunning(pid), false, `guest ${pid} still running`);
    const guest = await startGuest(translating, { config: { source_lang: 'eng', target_lang: 'spa' }, cwd: repo, logger: {} });
    await guest.close();
  });
});
