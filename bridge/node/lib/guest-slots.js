// The Node guest's slots: at most max_concurrency calls of the method at once, the others waiting their turn in the
// order read, and what becomes of a call its host cancelled.
//
// A cancelled call is answered at once (-32001, as the protocol asks), but the method may still be running it: its
// slot frees once the method's promise settles, which for a method that heeds its {signal} is at once. A call that
// has not settled MT_EVAL_GUEST_SETTLE_MS after its cancel (5,000 by default) — the method ignores its signal, or
// waits on a promise nothing settles — is abandoned: its slot goes to the next request, and stderr says so once for
// that call. Otherwise max_concurrency such calls would hold every slot for good, and each later request would wait in
// the queue until its host timed it out. What an abandoned call returns, if it ever does, is dropped.
//
// An abandoned call may still hold what it took (memory, sockets, work in progress), and a method that does not stop
// one call is unlikely to stop the next. So once twice max_concurrency of them (128 for the default 64, 4 for a
// method that declares 2) have not settled, the guest says why and exits with status 1: its host fails what is in flight (-32003), starts a fresh guest and sends
// each of those entries again alone. A call that settles late is no longer counted.


import { LONGEST_DELAY } from './lazy-timer.js';

export const SETTLE_VARIABLE = 'MT_EVAL_GUEST_SETTLE_MS';
export const DEFAULT_SETTLE_MS = 5000;
/** Abandoned calls that have not settled, at which the guest exits, per call it runs at once (max_concurrency). */
export const ABANDONED_PER_SLOT = 2;

/** Milliseconds a cancelled call may take to settle, from MT_EVAL_GUEST_SETTLE_MS; throws for a value that is not one. */
export function settleMilliseconds(environment = process.env) {
  const given = (environment[SETTLE_VARIABLE] ?? '').trim();
  if (given === '') return DEFAULT_SETTLE_MS;
  if (!/^[0-9]+$/.test(given)) {
    throw new Error(`${SETTLE_VARIABLE}=${JSON.stringify(environment[SETTLE_VARIABLE])} is not a number of milliseconds: `
      + `it is how long a cancelled call may take to return before its slot is given to the next request (default ${DEFAULT_SETTLE_MS})`);
  }
  return Math.min(Number(given), LONGEST_DELAY);
}

const seconds = (ms) => `${Number((ms / 1000).toFixed(3))} s`;

/**
 * The slots of one guest. start(job) runs a job given a slot; log(text) writes a line of the guest's own to stderr;
 * tooMany() is called once maxAbandoned calls are abandoned and unsettled (by default ABANDONED_PER_SLOT times the
 * slots, however many the method declares), after it is said why.
 */
export class CallSlots {
  constructor(size, { start, log, tooMany, settleMs = DEFAULT_SETTLE_MS, maxAbandoned }) {
    this.size = size;
    this.start = start;
    this.log = log;
    this.tooMany = tooMany;
    this.settleMs = settleMs;
    this.fixedMaxAbandoned = maxAbandoned;
    this.active = 0; // calls holding a slot (cancelled ones included, until they settle or are abandoned)
    this.abandoned = 0; // calls abandoned that have not settled
    this.queue = [];
  }

  /** Abandoned calls at which the guest exits: maxAbandoned if given, else twice the slots (size may change). */
  get maxAbandoned() {
    return this.fixedMaxAbandoned ?? ABANDONED_PER_SLOT * this.size;
  }

  /** A job read: it runs now if a slot is free, else once one is. */
  admit(job) {
    if (this.active < this.size) this.#take(job);
    else this.queue.push(job);
  }

  /** The host cancelled job (answered already): a queued one leaves the queue; a running one has settleMs to settle. */
  cancelled(job) {
    const queued = this.queue.indexOf(job);
    if (queued !== -1) {
      this.queue.splice(queued, 1);
      return;
    }
    if (!job.running || job.settleTimer) return;
    job.settleTimer = setTimeout(() => this.#abandon(job), Math.min(this.settleMs, LONGEST_DELAY));
    job.settleTimer.unref(); // (nothing to wait for once the input has ended)
  }

  /** The method's promise for job settled: its slot goes to the next job, unless it was given already. */
  settled(job) {
    clearTimeout(job.settleTimer);
    if (job.abandoned) this.abandoned--;
    else this.#free();
  }

  #take(job) {
    this.active++;
    job.running = true;
    this.start(job);
  }

  #abandon(job) {
    job.abandoned = true;
    this.abandoned++;
    const request = `${job.kind} request ${JSON.stringify(job.id)}`;
    if (this.abandoned >= this.maxAbandoned) {
      this.log(`${this.abandoned} cancelled calls of the method have not returned, ${request} the last (cancelled `
        + `${seconds(this.settleMs)} ago): the method does not stop a call when it is cancelled, and what those calls `
        + 'hold is never given back. Exiting, so that the host starts a fresh guest. Fix: make translate() and decide() '
        + 'return (or throw) once the signal of their third argument ({signal}) is aborted');
      this.tooMany();
      return;
    }
    this.log(`${request} was cancelled ${seconds(this.settleMs)} ago and the method has not returned from it (it does `
      + 'not heed its {signal}, or waits on a promise nothing settles): its slot is given to the next request, and '
      + `what it returns is dropped (${this.abandoned} call${this.abandoned === 1 ? '' : 's'} abandoned; at `
      + `${this.maxAbandoned} the guest exits so that its host starts a fresh one)`);
    this.#free();
  }

  #free() {
    this.active--;
    const next = this.queue.shift();
    if (next) this.#take(next);
  }
}
