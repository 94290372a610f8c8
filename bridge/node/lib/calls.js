// Calling an in-process method so that one bad entry fails alone (as mt_eval.isolation does in Python):
// a call that throws or runs past its deadline (timeout_s per entry) is sent again in halves, down to
// single entries, so only the entries the method fails on get the error.
import { errorResult, matchResults } from './results.js';

/** A call failed as a whole; its message is what the entries carry. */
class CallFailed extends Error {}

const TIMED_OUT = Symbol('timed out');

const failureText = (error) => `the method failed: ${error instanceof Error ? `${error.name}: ${error.message}` : String(error)}`;

/**
 * method.translate(entries, config, {signal}) within timeoutS per entry (null: no deadline); resolves
 * to one full result per entry, or rejects with CallFailed. The signal aborts when the deadline passes.
 */
async function guardedCall(method, entries, config, timeoutS) {
  const controller = new AbortController();
  let timer;
  const deadline = timeoutS ? new Promise((resolve) => {
    timer = setTimeout(resolve, timeoutS * 1000 * entries.length, TIMED_OUT);
  }) : null;
  let outcome;
  try {
    const call = method.translate(entries.map((entry) => ({ ...entry })), config, { signal: controller.signal });
    outcome = await (deadline ? Promise.race([call, deadline]) : call);
  } catch (error) {
    throw new CallFailed(failureText(error));
  } finally {
    clearTimeout(timer);
  }
  if (outcome === TIMED_OUT) {
    controller.abort();
    const limit = timeoutS * entries.length;
    throw new CallFailed(`timed out after ${Number(limit.toFixed(3))} s (${timeoutS} s per entry)`);
  }
  if (!Array.isArray(outcome)) throw new CallFailed('the method did not return a list of results');
  return matchResults(entries, outcome, { source: 'the method' });
}

/** One full result per entry, in entry order; a failed call is split until the failing entries are found. */
export async function translateIsolating(method, entries, config, timeoutS) {
  try {
    return await guardedCall(method, entries, config, timeoutS);
  } catch (error) {
    if (!(error instanceof CallFailed)) throw error;
    if (entries.length === 1) return [errorResult(entries[0].id, error.message)];
  }
  const middle = Math.floor(entries.length / 2);
  return [...await translateIsolating(method, entries.slice(0, middle), config, timeoutS),
    ...await translateIsolating(method, entries.slice(middle), config, timeoutS)];
}
