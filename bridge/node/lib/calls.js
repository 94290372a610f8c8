// Calling an in-process method so that one bad item fails alone (as mt_eval.guarded_calls does in Python): a
// call that throws is sent again in halves, down to single items, and one that runs past its deadline
// (timeout_s per item) one item per call, as many of those at once as the caller allows (halves would each wait out
// a deadline again), so only the items the method fails on get the error.

import { LONGEST_DELAY } from './child.js';
import { notAList } from './returned-words.js';
import { callFailure } from './host-failures.js';

/** A call failed as a whole; its message is what the items carry, timedOut whether it ran past its deadline. */
class CallFailed extends Error {
  constructor(message, { timedOut = false, stopped = false } = {}) {
    super(message);
    this.timedOut = timedOut;
    this.stopped = stopped; // (the caller stopped calling: every item fails at once, nothing is tried again)
  }
}

const TIMED_OUT = Symbol('timed out');
const STOPPED = Symbol('stopped');


/**
 * invoke(items, {signal}) within timeoutS per item (null: no deadline); resolves to what match(items,
 * results, seconds) makes of its results, or rejects with CallFailed. The signal aborts at the deadline.
 */
async function guardedCall(invoke, items, { timeoutS, match, unit = 'entry', stop = null }) {
  if (stop?.aborted) throw new CallFailed(String(stop.reason?.message ?? stop.reason), { stopped: true });
  const controller = new AbortController();
  let timer;
  // (capped: setTimeout fires a longer delay at once; a deadline of over 24 days is cut to that)
  const deadlineMs = timeoutS ? Math.min(timeoutS * 1000 * items.length, LONGEST_DELAY) : 0;
  const deadline = timeoutS ? new Promise((resolve) => {
    timer = setTimeout(resolve, deadlineMs, TIMED_OUT);
  }) : null;
  let onStop;
  const stopped = stop && new Promise((resolve) => {
    onStop = () => resolve(STOPPED);
    stop.addEventListener('abort', onStop, { once: true });
  });
  const started = performance.now();
  let outcome;
  try {
    const call = invoke(items, { signal: controller.signal });
    outcome = await (deadline || stopped ? Promise.race([call, deadline, stopped].filter(Boolean)) : call);
  } catch (error) {
    throw new CallFailed(callFailure(error)); // (in the words a guest's failure is given)
  } finally {
    clearTimeout(timer);
    stop?.removeEventListener('abort', onStop);
  }
  if (outcome === STOPPED) {
    controller.abort();
    throw new CallFailed(String(stop.reason?.message ?? stop.reason), { stopped: true });
  }
  if (outcome === TIMED_OUT) {
    controller.abort();
    const limit = deadlineMs / 1000;
    throw new CallFailed(`timed out after ${Number(limit.toFixed(3))} s (${timeoutS} s per ${unit})`,
      { timedOut: true });
  }
  if (!Array.isArray(outcome)) throw new CallFailed(notAList('the method', outcome));
  return match(items, outcome, (performance.now() - started) / 1000);
}

/**
 * One result per item, in item order, from invoke(items, {signal}) → the method's results; a failed call is
 * split until the failing items are found, each getting fail(id, message). options: timeoutS, match, fail,
 * unit (what an item is called in a timeout message: "entry", "row"), stop (an AbortSignal: once aborted, the call
 * in flight is abandoned and every item fails at once with its reason's message), slots (a Slots each call holds
 * one of, taken before its deadline starts: the method's calls at once), atOnce (the calls of one item each, after
 * a call timed out, sent at a time: 1 by default, one after another).
 */
export async function callIsolating(invoke, items, options) {
  try {
    return await withSlot(options.slots, () => guardedCall(invoke, items, options));
  } catch (error) {
    if (!(error instanceof CallFailed)) throw error;
    if (items.length === 1 || error.stopped) return items.map((item) => options.fail(item.id, error.message));
    if (error.timedOut) return eachAlone(invoke, items, options);
  }
  const middle = Math.floor(items.length / 2);
  return [...await callIsolating(invoke, items.slice(0, middle), options),
    ...await callIsolating(invoke, items.slice(middle), options)];
}

/**
 * Each item in a call of its own, options.atOnce of those calls at a time (as mt_eval.guarded_calls does): each
 * part of a call that timed out would wait out its own deadline again. Results in item order; what a call throws
 * (a bug, not a failed call) stops the sending of the others and is thrown.
 */
async function eachAlone(invoke, items, options) {
  const results = new Array(items.length);
  let next = 0;
  let broken = false;
  const worker = async () => {
    while (next < items.length && !broken) {
      const index = next++;
      try {
        results[index] = await callIsolating(invoke, [items[index]], options);
      } catch (error) {
        broken = true;
        throw error;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(options.atOnce ?? 1, items.length)) }, worker));
  return results.flat();
}

async function withSlot(slots, work) {
  if (!slots) return work();
  await slots.acquire();
  try {
    return await work();
  } finally {
    slots.release();
  }
}
