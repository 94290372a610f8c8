// LazyTimer (lib/lazy-timer.js): one timer for the deadlines of every request of a Node host connection.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';

import { LazyTimer } from '../lib/lazy-timer.js';

const timerModule = new URL('../lib/lazy-timer.js', import.meta.url).href;

test('it fires no later than the earliest deadline it was given, once', async () => {
  const fired = [];
  const timer = new LazyTimer(() => fired.push(performance.now()));
  const started = performance.now();
  timer.ensure(started + 60_000);
  timer.ensure(started + 50); // earlier: it is armed again for this one
  timer.ensure(started + 30_000); // later: nothing changes
  await new Promise((resolve) => { setTimeout(resolve, 400); });
  assert.equal(fired.length, 1);
  assert.ok(fired[0] - started >= 49 && fired[0] - started < 350, `fired after ${fired[0] - started} ms`);
  timer.ensure(Infinity); // no deadline: nothing to arm
  timer.cancel();
});

test('while idle it does not keep the process alive, and a new deadline holds it again', () => {
  const run = (body) => spawnSync(process.execPath, ['--input-type=module', '-e',
    `import { LazyTimer } from '${timerModule}';\n${body}`], { encoding: 'utf8', timeout: 20_000 });
  const began = Date.now();
  const idle = run("const t = new LazyTimer(() => console.log('fired')); t.ensure(performance.now() + 60000); t.idle();");
  assert.equal(idle.status, 0);
  assert.equal(idle.stdout, '');
  assert.ok(Date.now() - began < 15_000, 'an idle timer kept the process alive');
  const held = run(`const t = new LazyTimer(() => console.log('fired'));
t.ensure(performance.now() + 300); t.idle(); t.ensure(performance.now() + 60000);`);
  assert.equal(held.status, 0);
  assert.equal(held.stdout, 'fired\n'); // held open until the timer fired
});
