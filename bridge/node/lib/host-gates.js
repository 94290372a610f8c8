// How the host lets requests through to a guest: Slots bounds the batches in flight by the guest's declared
// concurrency, and SoloGate sends work alone after a failure, so the entry a failure belongs to is found.

/** Limits how many batches are in flight; the limit follows the guest's current capabilities. */
export class Slots {
  constructor(limit) {
    this.limit = limit;
    this.used = 0;
    this.waiting = [];
  }

  /** Take a slot if one is free now; false if not (then await acquire()). */
  tryAcquire() {
    if (this.used >= this.limit) return false;
    this.used++;
    return true;
  }

  acquire() {
    if (this.tryAcquire()) return Promise.resolve();
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  release() {
    this.used--;
    this.#wake();
  }

  setLimit(limit) {
    this.limit = limit;
    this.#wake();
  }

  #wake() {
    while (this.used < this.limit && this.waiting.length) {
      this.used++;
      this.waiting.shift()();
    }
  }
}

/**
 * Work passes through shared() together, except work that must be alone(): that waits until nothing
 * else is in flight and keeps the rest out until it is done (as mt_eval.child_process.SoloGate).
 */
export class SoloGate {
  #active = 0;
  #solo = null;
  #idle = [];

  async shared(work) {
    while (this.#solo) await this.#solo;
    this.#active++;
    try {
      return await work();
    } finally {
      if (--this.#active === 0) for (const wake of this.#idle.splice(0)) wake();
    }
  }

  async alone(work) {
    while (this.#solo) await this.#solo;
    let release;
    this.#solo = new Promise((resolve) => { release = resolve; });
    try {
      while (this.#active > 0) await new Promise((resolve) => this.#idle.push(resolve));
      return await work();
    } finally {
      this.#solo = null;
      release();
    }
  }
}
