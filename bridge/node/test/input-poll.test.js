// After the Node guest has answered everything it was asked, it polls its stdin for a moment
// (MT_EVAL_GUEST_POLL_US, 200 µs by default) before sleeping in the event loop, so that a caller's next request
// is read as it arrives (lib/input-poll.js).
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { constants, mkdtempSync, openSync, closeSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';

import { LineDriver, nodePackage } from './helpers/guests.js';
import { inputPoller, pollNanoseconds } from '../lib/input-poll.js';

const bin = join(nodePackage, 'bin', 'mt-eval-guest.js');
const scratch = mkdtempSync(join(tmpdir(), 'mt-eval-input-poll-'));
const drivers = [];
after(() => drivers.forEach((driver) => driver.kill()));

// Each answer carries the guest's CPU time so far (µs), to see what polling costs and when.
const CPU_CLOCK = join(scratch, 'cpu-clock.js');
writeFileSync(CPU_CLOCK, `
export const name = 'CPU clock';
export function translate(entries) {
  const { user, system } = process.cpuUsage();
  return entries.map((e) => ({ id: e.id, predicted: e.source.toUpperCase(), metadata: { cpu_us: user + system } }));
}
`);

function guest(microseconds, prefix = []) {
  const env = { ...process.env, MT_EVAL_GUEST_POLL_US: microseconds };
  const driver = new LineDriver([...prefix, process.execPath, bin, '--module', CPU_CLOCK], { env });
  drivers.push(driver);
  return driver;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

describe('the setting', () => {
  test('the poll time comes from MT_EVAL_GUEST_POLL_US in microseconds, 200 when unset', () => {
    assert.equal(pollNanoseconds({}), 200_000n);
    assert.equal(pollNanoseconds({ MT_EVAL_GUEST_POLL_US: '' }), 200_000n);
    assert.equal(pollNanoseconds({ MT_EVAL_GUEST_POLL_US: '0' }), 0n);
    assert.equal(pollNanoseconds({ MT_EVAL_GUEST_POLL_US: ' 350 ' }), 350_000n);
    assert.equal(pollNanoseconds({ MT_EVAL_GUEST_POLL_US: '10000' }), 10_000_000n);
  });

  for (const given of ['abc', '-5', '1.5', '10001', '2e3']) {
    test(`${JSON.stringify(given)} is refused by name`, () => {
      assert.throws(() => pollNanoseconds({ MT_EVAL_GUEST_POLL_US: given }),
        { message: new RegExp(`^MT_EVAL_GUEST_POLL_US=${JSON.stringify(given).replace('.', '\\.')} is not a number of microseconds.*0 turns polling off`) });
    });
  }

  test('a guest given an unusable poll time says so and exits 2 before serving', async () => {
    const driver = guest('fast');
    assert.deepEqual(await driver.exited, { code: 2, signal: null });
    assert.match(driver.stderr, /mt-eval-guest: MT_EVAL_GUEST_POLL_US="fast" is not a number of microseconds/);
    assert.equal(driver.lines.length, 0);
  });

  test('a file, or polling turned off, is not polled', () => {
    const file = join(scratch, 'requests.jsonl');
    writeFileSync(file, '{}\n');
    const fd = openSync(file, 'r');
    try {
      assert.equal(inputPoller(fd, 200_000n), null);
    } finally {
      closeSync(fd);
    }
    assert.equal(inputPoller(0, 0n), null);
  });
});

// µs of guest CPU over `gaps` idle pauses of 30 ms, each after an answer
async function cpuOver(driver, gaps) {
  await driver.initialize();
  driver.translate(0, [{ id: 'a', source: 'first' }]);
  const first = (await driver.next()).result.results[0].metadata.cpu_us;
  for (let i = 1; i <= gaps; i++) {
    await sleep(30);
    driver.translate(i, [{ id: 'a', source: 'next' }]);
    const answer = await driver.next();
    assert.equal(answer.result.results[0].predicted, 'NEXT');
    if (i === gaps) {
      assert.deepEqual(await driver.close(), { code: 0, signal: null });
      return answer.result.results[0].metadata.cpu_us - first;
    }
  }
  return 0;
}

describe('on one CPU', () => {
  const hasTaskset = spawnSync('taskset', ['-c', '0', 'true']).status === 0;

  test('a poller of a process that may run on one CPU reads nothing, and asks again only after a while', () => {
    const fifo = join(scratch, 'fifo');
    execFileSync('mkfifo', [fifo]);
    const fd = openSync(fifo, constants.O_RDWR | constants.O_NONBLOCK);
    try {
      let cpus = 1;
      let asked = 0;
      const poller = inputPoller(fd, 10_000_000n, () => { asked += 1; return cpus; });
      writeSync(fd, 'a request\n');
      assert.equal(poller.poll(), null); // (its host could run only once it stops)
      cpus = 2;
      assert.equal(poller.poll(), null);
      assert.equal(asked, 1); // (not a system call per poll)
      assert.equal(String(inputPoller(fd, 10_000_000n, () => 2).poll()), 'a request\n');
    } finally {
      closeSync(fd);
    }
  });

  test('a guest started on one CPU (taskset) spends no CPU polling between calls', { skip: !hasTaskset && 'no taskset' },
    async () => {
      const pinned = await cpuOver(guest('10000', ['taskset', '-c', '0']), 10);
      // polling, it would spend its 10 ms after each of the 10 answers, 100 ms (as the test below shows); the
      // answers themselves take a few ms, more on a busy machine
      assert.ok(pinned < 50_000, `on one CPU the guest spent ${pinned} µs of CPU over 10 pauses of 30 ms`);
    });
});

describe('the guest', () => {
  test('after answering everything it polls for its time, then sleeps: CPU spent only then', async () => {
    const polling = await cpuOver(guest('10000'), 10); // 10 pauses, each with 10 ms of polling
    const off = await cpuOver(guest('0'), 10);
    // (at least 2 ms of each 10 ms poll: a busy machine may run the polling guest only part of the time)
    assert.ok(polling >= 20_000, `10 polls of 10 ms cost only ${polling} µs of CPU`);
    assert.ok(polling <= 250_000, `polling went on past its time: ${polling} µs of CPU over 10 pauses of 30 ms`);
    assert.ok(off < polling / 2, `without polling the guest spent ${off} µs of CPU, with it ${polling} µs`);
  });

  test('requests sent one after another, and one split across a poll, are answered whole and in order', async () => {
    const driver = guest('10000');
    await driver.initialize();
    for (let i = 1; i <= 20; i++) {
      driver.translate(i, [{ id: `e${i}`, source: `call ${i}` }]);
      const answer = await driver.next();
      assert.deepEqual([answer.id, answer.result.results[0].predicted], [i, `CALL ${i}`]);
    }
    const line = `${JSON.stringify({ jsonrpc: '2.0', id: 21, method: 'translate',
      params: { entries: [{ id: 's', source: 'split in two' }] } })}\n`;
    driver.sendRaw(line.slice(0, 20)); // half of it read by the poll, the rest by the event loop
    await sleep(50);
    driver.sendRaw(line.slice(20));
    assert.equal((await driver.next()).result.results[0].predicted, 'SPLIT IN TWO');
    assert.deepEqual(await driver.close(), { code: 0, signal: null });
  });

  test('a host closing stdin while the guest polls ends the guest', async () => {
    const driver = guest('10000');
    await driver.initialize();
    driver.translate(1, [{ id: 'a', source: 'last' }]);
    await driver.next();
    const started = Date.now();
    assert.deepEqual(await driver.close(), { code: 0, signal: null });
    assert.ok(Date.now() - started < 5000);
  });
});
