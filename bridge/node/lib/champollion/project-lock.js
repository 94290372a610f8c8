// The lock that keeps two runs out of one champollion project, shared with Python (mt_eval.locks).
//
// Node has no flock(2), so both sides use the primitive they share: a listening Unix socket bound to a
// name derived from the locales directory's device and inode. Binding is atomic — one process gets the
// name, every other gets EADDRINUSE — and the kernel frees the name as soon as the socket's last
// descriptor closes, which happens when its process ends in any way (SIGKILL included): there is no
// file to go stale and nothing to clean up. The holder answers a connection with who it is. On Linux
// the name is in the abstract namespace (no file at all; shared by the processes of one network
// namespace); elsewhere it is a socket file in the temporary directory, replaced when nobody answers it.
// libuv binds an abstract name padded with NULs to the whole of sun_path; Python holds that form and the
// exact one, and looks for a holder at both, so the two sides see each other.
import { createHash } from 'node:crypto';
import { statSync, unlinkSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';

const POLL_MS = 100;

/** Another process holds the project (what: the project); holder is what it says about itself (may be empty). */
export class ProjectBusyError extends Error {
  constructor(what, holder) {
    super(`${what} is in use by ${describeHolder(holder)}`);
    this.name = 'ProjectBusyError';
    this.what = what;
    this.holder = holder;
  }
}

/** "pid 4242 (mt-eval locales, started 2025-01-02T10:00:00+00:00)", as Python words it. */
export function describeHolder(holder) {
  if (!holder?.pid) return 'another process (it did not say which)';
  const details = [];
  if (holder.command) details.push(String(holder.command));
  if (holder.started_at) details.push(`started ${holder.started_at}`);
  if (holder.host && holder.host !== hostname()) details.push(`on ${holder.host}`);
  return `pid ${holder.pid}${details.length ? ` (${details.join(', ')})` : ''}`;
}

/** The socket address Python and Node both derive for a project's locales directory. */
export function projectLockAddress(localesDir) {
  const info = statSync(localesDir, { bigint: true });
  const key = createHash('sha256').update(`champollion-project:${info.dev}:${info.ino}`).digest('hex').slice(0, 32);
  return process.platform === 'linux' ? `\0mt-eval/${key}` : join(tmpdir(), `mt-eval-${key}.sock`);
}

function holderInfo(command) {
  const startedAt = new Date().toISOString().replace(/\.\d+Z$/, '+00:00');
  return { pid: process.pid, started_at: startedAt, command, host: hostname() };
}

/** What the holder of address says about itself: {} when it does not answer in time, null when nobody listens. */
export function askHolder(address, timeoutMs = 1000) {
  return new Promise((resolve) => {
    let data = '';
    const socket = connect({ path: address });
    const done = (value) => {
      socket.destroy();
      clearTimeout(timer);
      resolve(value);
    };
    const timer = setTimeout(() => done({}), timeoutMs);
    socket.setEncoding('utf8');
    socket.on('data', (chunk) => {
      data += chunk;
      if (data.includes('\n')) socket.end();
    });
    socket.on('end', () => {
      try {
        const found = JSON.parse(data || 'null');
        done(found !== null && typeof found === 'object' ? found : {});
      } catch {
        done({});
      }
    });
    socket.on('error', (error) => done(['ECONNREFUSED', 'ENOENT'].includes(error.code) ? null : {}));
  });
}

function bind(address, info) {
  return new Promise((resolve, reject) => {
    const server = createServer((socket) => {
      socket.on('error', () => {});
      socket.end(`${JSON.stringify(info)}\n`);
    });
    server.once('error', reject);
    server.listen({ path: address, backlog: 8 }, () => {
      server.removeListener('error', reject);
      server.unref(); // the lock never keeps the process alive
      resolve(server);
    });
  });
}

const sleep = (ms) => new Promise((resolve) => { setTimeout(resolve, ms); });

/**
 * Hold the project of localesDir until release(). Rejects with ProjectBusyError when another process
 * holds it, at once or, with waitS (seconds, Infinity for no limit), once that long has passed;
 * onWait(busy) is called once when waiting begins, and an abort of signal ends the wait (rejecting with
 * its reason).
 */
export async function acquireProjectLock(localesDir, { command, waitS = null, onWait, signal } = {}) {
  if (waitS !== null && waitS !== undefined && !(typeof waitS === 'number' && waitS >= 0)) { // (NaN waited for ever)
    throw new TypeError(`waitS must be a number of seconds, 0 or more (Infinity: no limit), got ${String(waitS)}`);
  }
  const address = projectLockAddress(localesDir);
  const info = holderInfo(command);
  const deadline = waitS === null || waitS === undefined ? null : Date.now() + waitS * 1000;
  let told = false;
  for (;;) {
    signal?.throwIfAborted();
    let holder = {};
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        const server = await bind(address, info);
        return {
          release: () => new Promise((resolve) => {
            server.close(() => resolve());
            if (!address.startsWith('\0')) { try { unlinkSync(address); } catch { /* gone */ } }
          }),
        };
      } catch (error) {
        if (error.code !== 'EADDRINUSE') throw error;
      }
      holder = await askHolder(address);
      if (holder !== null) break;
      if (!address.startsWith('\0')) { try { unlinkSync(address); } catch { /* gone */ } } // left by a dead holder
      holder = {};
    }
    const busy = new ProjectBusyError(`champollion project ${localesDir}`, holder);
    if (deadline === null || Date.now() >= deadline) throw busy;
    if (!told) onWait?.(busy);
    told = true;
    await sleep(POLL_MS);
  }
}
