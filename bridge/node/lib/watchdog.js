// Noticing an event loop that synchronous code has blocked (as mt_eval.loop_watchdog does in Python).
//
// A translate.js running in this process that blocks the event loop (a busy loop, a catastrophic
// regular expression, a synchronous call) stops every timer, so no timeout can fire and the process
// would hang for as long as the call does. Node cannot interrupt JavaScript running on the main thread,
// so a worker thread watches a heartbeat the main thread writes into shared memory: when the loop has
// not turned for the armed limit, the worker writes the message to stderr and ends the process with
// SIGKILL — whatever was already saved stays saved, and nothing hangs.
import { Worker } from 'node:worker_threads';

const BEAT_MS = 50;
const NOW = 0; // milliseconds since start, written by the main thread
const LIMIT = 1; // the armed limit in milliseconds (0: disarmed)

const WATCHER = `
const { workerData } = require('node:worker_threads');
const { writeSync } = require('node:fs');
const shared = new Int32Array(workerData.buffer);
const started = workerData.started;
const pause = new Int32Array(new SharedArrayBuffer(4));
for (;;) {
  Atomics.wait(pause, 0, 0, ${BEAT_MS});
  const limit = Atomics.load(shared, ${LIMIT});
  if (limit === -1) break;
  const blocked = Date.now() - started - Atomics.load(shared, ${NOW});
  if (limit > 0 && blocked > limit) {
    writeSync(2, workerData.message.replace('{seconds}', (blocked / 1000).toFixed(1)) + '\\n');
    process.kill(process.pid, 'SIGKILL');
  }
}`;

export class LoopWatchdog {
  #shared = new Int32Array(new SharedArrayBuffer(8));
  #started = Date.now();
  #worker = null;
  #timer = null;
  #armed = 0;

  /** message: what to print before the process is ended ("{seconds}" is replaced). */
  constructor(message) {
    this.message = message;
  }

  /** Watch while work runs; the loop may not stop for longer than limitMs. Returns disarm(). */
  arm(limitMs) {
    this.#start();
    this.#armed++;
    this.#beat();
    Atomics.store(this.#shared, LIMIT, Math.max(Math.ceil(limitMs), Atomics.load(this.#shared, LIMIT)));
    let done = false;
    return () => {
      if (done) return;
      done = true;
      if (--this.#armed === 0) Atomics.store(this.#shared, LIMIT, 0);
    };
  }

  /** Stop watching for good. */
  close() {
    Atomics.store(this.#shared, LIMIT, -1);
    clearInterval(this.#timer);
    this.#worker = null;
  }

  #beat() {
    Atomics.store(this.#shared, NOW, Date.now() - this.#started);
  }

  #start() {
    if (this.#worker) return;
    this.#worker = new Worker(WATCHER, {
      eval: true, execArgv: [], // CommonJS, whatever flags (--input-type=module) this process runs with
      workerData: { buffer: this.#shared.buffer, started: this.#started, message: this.message },
    });
    this.#worker.on('error', () => {}); // a watchdog that cannot run is no reason to fail the work
    this.#worker.unref();
    this.#timer = setInterval(() => this.#beat(), BEAT_MS);
    this.#timer.unref();
  }
}

/** Resolves after the event loop has turned once: work that never waits for I/O lets signals and timers in. */
export function nextTurn() {
  return new Promise((resolve) => { setImmediate(resolve); });
}
