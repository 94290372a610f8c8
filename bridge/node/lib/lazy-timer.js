// One timer serving any number of deadlines, as mt_eval.child_process.LazyTimer: ensure(at) arms it to fire no later
// than `at` (performance.now() milliseconds); its callback finds what is due and calls ensure again for the next. A
// deadline moved later costs nothing, and a request that comes and goes neither creates nor clears a timer: while
// nothing waits (idle), the armed timer stays, but no longer keeps the process alive.
/** setTimeout's longest delay: a longer one fires at once (Node warns, and waits 1 ms). */
export const LONGEST_DELAY = 2 ** 31 - 1;

export class LazyTimer {
  #callback;
  #timer = null;
  #at = Infinity;

  constructor(callback) {
    this.#callback = callback;
  }

  ensure(at) {
    if (!Number.isFinite(at)) return;
    if (this.#timer !== null && this.#at <= at) {
      this.#timer.ref();
      return;
    }
    clearTimeout(this.#timer);
    this.#at = at;
    const wait = Math.max(1, Math.ceil(at - performance.now()));
    this.#timer = setTimeout(() => this.#fire(), Math.min(LONGEST_DELAY, wait));
  }

  /** Nothing waits for now: the timer may fire, but does not keep the process alive. */
  idle() {
    this.#timer?.unref();
  }

  cancel() {
    clearTimeout(this.#timer);
    this.#timer = null;
    this.#at = Infinity;
  }

  #fire() {
    this.#timer = null;
    this.#at = Infinity;
    this.#callback();
  }
}
