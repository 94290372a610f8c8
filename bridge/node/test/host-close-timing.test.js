// How long close() and a timed-out request's cancel take: close() right after a timeout does not first wait out the
// cancel's grace, nor during a restart the new guest's initialize, and waits beyond setTimeout's range (2^31 - 1 ms, Infinity too) are long waits, not 1 ms ones.
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { startGuest } from '../index.js';
import { CONFIG, isRunning, recordingLogger, testGuest } from './helpers/guests.js';

const misbehaving = (mode) => [process.execPath, testGuest('misbehaving.js'), mode];
const sleep = (ms) => new Promise((resolve) => { setTimeout(resolve, ms); });

async function start(mode, options) {
  const { logger, text } = recordingLogger();
  const guest = await startGuest(misbehaving(mode), { config: CONFIG, logger, ...options });
  return Object.assign(guest, { logText: text });
}

test('close() right after a request timed out closes within its steps, without waiting out the cancel\'s grace', async () => {
  const guest = await start('hang', { requestTimeoutMs: 200, cancelGraceMs: 10_000, closeStepMs: 300 });
  const pid = guest.pid;
  const [result] = await guest.translate([{ id: 'h', source: 'x' }]);
  assert.match(result.error, /no answer or progress within 0\.2 s/);
  const began = Date.now();
  await guest.close();
  assert.ok(Date.now() - began < 2_000, `close took ${Date.now() - began} ms`);
  assert.doesNotMatch(guest.logText(), /did not answer the cancel/);
  assert.equal(isRunning(pid), false);
});

test('cancelGraceMs: Infinity leaves a guest that has not answered a cancel running, rather than stopping it at once', async () => {
  const guest = await start('hang', { requestTimeoutMs: 200, cancelGraceMs: Infinity, closeStepMs: 300 });
  const pid = guest.pid;
  await guest.translate([{ id: 'h', source: 'x' }]);
  await sleep(300);
  assert.equal(guest.pid, pid);
  assert.doesNotMatch(guest.logText(), /stopping the guest/);
  await guest.close();
  assert.equal(isRunning(pid), false);
});

test('closeStepMs: Infinity waits for a guest that ends on its own once its stdin closes, rather than signalling it', async () => {
  const guest = await start('slow-exit', { closeStepMs: Infinity });
  const pid = guest.pid;
  await guest.close();
  assert.match(guest.stderrTail, /exiting on its own/);
  assert.doesNotMatch(guest.stderrTail, /SIGTERM/);
  assert.equal(isRunning(pid), false);
});

test('close() during a restart abandons it, rather than wait startTimeoutMs for the new guest\'s initialize', async () => {
  const state = join(mkdtempSync(join(tmpdir(), 'mt-eval-host-test-')), 'starts');
  const guest = await start('hang-on-restart', {
    env: { ...process.env, MISBEHAVING_STATE: state }, startTimeoutMs: 20_000, closeStepMs: 300,
  });
  const [crashed] = await guest.translate([{ id: 'a', source: 'x' }]);
  assert.match(crashed.error, /exited with code 3/);
  const waiting = guest.translate([{ id: 'b', source: 'y' }]); // (starts the restart)
  let pid = null;
  for (let i = 0; i < 100 && pid === null; i++) {
    await sleep(50);
    pid = Number(/restarted as pid (\d+)/.exec(guest.stderrTail)?.[1] ?? 0) || null;
  }
  assert.ok(pid, 'the guest was restarted');
  const began = Date.now();
  await guest.close();
  assert.ok(Date.now() - began < 3_000, `close took ${Date.now() - began} ms`);
  const [closed] = await waiting;
  assert.equal(closed.error, 'the guest was closed');
  assert.equal(isRunning(pid), false);
});
