// A guest polls its input for a moment after it answers, before it goes back to sleep in the event loop.
// A caller making one call after another sends its next request a few microseconds after it reads an answer; a
// guest asleep by then is woken by the kernel, which on a virtual machine with an idle CPU costs more than the
// rest of the round trip. So with nothing left in flight the guest reads its input without blocking for up to
// MT_EVAL_GUEST_POLL_US microseconds (200 by default, 0 turns it off), as the Python guest does
// (sdk/mt_eval/bridge/input_poll.py).
// A guest that may run on one CPU only (its affinity: taskset, a one-CPU machine) does not poll: its host can then run
// only while the guest is not running, so polling would delay the very request it waits for. The affinity is looked
// at again every second, since it can change while the guest runs (taskset -p).
import { fstatSync, readSync } from 'node:fs';
import { availableParallelism } from 'node:os';

export const POLL_VARIABLE = 'MT_EVAL_GUEST_POLL_US';
const DEFAULT_MICROSECONDS = 200;
const MAX_MICROSECONDS = 10_000;
const RECHECK_NANOSECONDS = 1_000_000_000n;

/** Nanoseconds to poll, from MT_EVAL_GUEST_POLL_US; throws for a value that is not 0 to 10,000 microseconds. */
export function pollNanoseconds(environment = process.env) {
  const given = (environment[POLL_VARIABLE] ?? '').trim();
  if (given === '') return BigInt(DEFAULT_MICROSECONDS * 1000);
  if (!/^[0-9]+$/.test(given) || Number(given) > MAX_MICROSECONDS) {
    throw new Error(`${POLL_VARIABLE}=${JSON.stringify(environment[POLL_VARIABLE])} is not a number of microseconds `
      + `from 0 to 10,000: it is how long a guest polls its input after answering (default ${DEFAULT_MICROSECONDS}; `
      + '0 turns polling off)');
  }
  return BigInt(Number(given) * 1000);
}

/**
 * A poller of file descriptor `fd` (a pipe or socket the event loop reads without blocking), or null when it
 * cannot be polled: a file or a terminal, or polling turned off. poll() returns the bytes that arrived within
 * the time, or null: nothing came, the input ended, reading failed (the event loop's own reading then finds
 * the end or the error and reports it), or this process may run on one CPU only. `cpus` counts the CPUs it may run on
 * (availableParallelism, which follows the affinity), asked again after a second.
 */
export function inputPoller(fd, nanoseconds, cpus = availableParallelism) {
  if (nanoseconds === 0n || process.platform === 'win32') return null;
  let stats;
  try {
    stats = fstatSync(fd);
  } catch {
    return null;
  }
  if (!stats.isFIFO() && !stats.isSocket()) return null;
  const buffer = Buffer.allocUnsafe(1 << 16);
  let worthIt = true;
  let recheckAt = 0n;
  return {
    poll() {
      const now = process.hrtime.bigint();
      if (now >= recheckAt) {
        recheckAt = now + RECHECK_NANOSECONDS;
        worthIt = cpus() > 1;
      }
      if (!worthIt) return null;
      const deadline = now + nanoseconds;
      for (;;) {
        let count;
        try {
          count = readSync(fd, buffer, 0, buffer.length, null);
        } catch (error) {
          if (error.code === 'EAGAIN' && process.hrtime.bigint() < deadline) continue;
          return null;
        }
        return count > 0 ? Buffer.from(buffer.subarray(0, count)) : null;
      }
    },
  };
}
