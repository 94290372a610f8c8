// A program hosting a guest that ends without closing it — a signal it does not listen for, an exception or a
// rejection nothing catches — takes the guest's process group with it, and ends as it would have otherwise.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';

import { isRunning, nodePackage, testGuest, waitFor } from './helpers/guests.js';

// A guest that ignores SIGTERM and stays up when its stdin closes: only its group's SIGKILL ends it.
const PROGRAM = `
import { startGuest } from ${JSON.stringify(pathToFileURL(join(nodePackage, 'index.js')).href)};
const guest = await startGuest([process.execPath, ${JSON.stringify(testGuest('misbehaving.js'))}, 'ignore-sigterm'],
  { config: { source_lang: 'eng', target_lang: 'spa' }, logger: {} });
process.stdout.write(guest.pid + '\\n');
const how = process.argv[1];
if (how === 'throw') setTimeout(() => { throw new Error('nothing catches this'); }, 50);
else if (how === 'reject') setTimeout(() => { Promise.reject(new Error('nothing handles this')); }, 50);
else setInterval(() => {}, 1000);
`;

/** Run the program; resolves {code, signal, guestPid} once it has ended (sending it `signal` once its guest runs). */
function host(how, signal) {
  const child = spawn(process.execPath, ['--input-type=module', '-e', PROGRAM, how], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stderr.on('data', (chunk) => { stderr += chunk; });
  return new Promise((resolve) => {
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
      if (signal && stdout.endsWith('\n')) child.kill(signal);
    });
    child.on('exit', (code, ended) => resolve({ code, signal: ended, guestPid: Number(stdout), stderr }));
  });
}

for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) {
  test(`a host ended by ${signal} it does not listen for kills its guest's group, and is still ended by it`, async () => {
    const ended = await host('wait', signal);
    assert.equal(ended.signal, signal, ended.stderr);
    assert.ok(ended.guestPid > 0, ended.stderr);
    assert.ok(await waitFor(() => !isRunning(ended.guestPid), 5_000), `guest ${ended.guestPid} is still running`);
  });
}

for (const how of ['throw', 'reject']) {
  test(`a host ended by an uncaught ${how === 'throw' ? 'exception' : 'rejection'} kills its guest's group`, async () => {
    const ended = await host(how);
    assert.equal(ended.code, 1, ended.stderr);
    assert.match(ended.stderr, /nothing (catches|handles) this/);
    assert.ok(ended.guestPid > 0, ended.stderr);
    assert.ok(await waitFor(() => !isRunning(ended.guestPid), 5_000), `guest ${ended.guestPid} is still running`);
  });
}

// A program that translates and never closes its guest: once nothing is in flight, the guest does not keep it running.
const FORGETFUL = `
import { startGuest } from ${JSON.stringify(pathToFileURL(join(nodePackage, 'index.js')).href)};
const guest = await startGuest([process.execPath, ${JSON.stringify(join(nodePackage, 'bin', 'mt-eval-guest.js'))},
  ${JSON.stringify(join(nodePackage, '..', '..', 'tests', 'fixtures', 'reverse'))}], { config: { source_lang: 'eng', target_lang: 'spa' } });
const [result] = await guest.translate([{ id: '1', source: '!sleep 300 abc' }]);
process.stdout.write(guest.pid + ' ' + result.predicted + '\\n');
`;

test('a program that never closes its guest still ends once its work is done, and the guest with it', async () => {
  const began = Date.now();
  const child = spawn(process.execPath, ['--input-type=module', '-e', FORGETFUL], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  child.stdout.on('data', (chunk) => { stdout += chunk; });
  const code = await new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.on('exit', (status) => { clearTimeout(timer); resolve(status); });
  });
  assert.equal(code, 0, `it did not end by itself (${Date.now() - began} ms)`);
  const [pid, predicted] = stdout.trim().split(' ');
  assert.match(predicted, /^spa:/); // (the call in flight was waited for)
  assert.ok(await waitFor(() => !isRunning(Number(pid)), 5_000), `guest ${pid} is still running`);
});
