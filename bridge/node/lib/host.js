// The Node host: start a guest, translate through it in batches, restart it when it dies (within a crash-loop budget),
// and close it leaving nothing behind. Guest failures never reject translate(): the affected entries get per-entry
// error results, and the entries a failure belongs to are found (as mt_eval.bridge.method does): a request the method
// failed, or whose answer was too large, unreadable or without a results list, is split in halves down to single
// entries (one refused for its config, which every entry carries, fails them all at once); after the guest crashed,
// hung or was stopped with several entries in flight, each is sent again alone, one at a time (until one is refused
// for its config: the others then fail with it, unsent). A guest that completed work before it died is not
// crash-looping: its restart costs nothing from the budget. An entry whose text no guest can read (a lone surrogate:
// lib/lone-surrogates.js) fails at once and is never sent.
import { readFileSync } from 'node:fs';

import { Connection } from './connection.js';
import {
  BridgeError, EncodedParams, ErrorCode, PROTOCOL_VERSION, encode, isPlainObject, lineLimit, request, requestLine,
} from './protocol.js';
import { methodView } from './gold.js';
import { decisionError, matchDecisions, rowsProblem } from './decisions.js';
import { ResultNotes, errorResult, matchResults } from './results.js';
import { sayStrays } from './unmatched.js';
import { ConfigRefused, WithoutResults, aboutConfig, compactTail, eachAlone, failureText, formatTail, notImplemented, notStarted, startTimedOut } from './host-failures.js';
import { SoloGate, Slots } from './host-gates.js';
import { checkConfig, checkGuestConfig, completeCapabilities, completeOptions, initializeProblem } from './host-options.js';
import { sendingOnlyValidText } from './lone-surrogates.js';
import { entriesProblem } from './guest-requests.js';

// The requests that carry a batch: the params key of the batch, how a failed item looks, and how results
// come back (checked and in item order).
const BATCHED = {
  translate: { key: 'entries', owner: 'entry', fail: errorResult, match: matchResults },
  decide: { key: 'rows', owner: 'row', fail: decisionError, match: matchDecisions },
};
// The bytes of a request line around its params, at the longest id (without the "\n").
for (const [kind, batched] of Object.entries(BATCHED)) {
  batched.envelope = requestLine(Number.MAX_SAFE_INTEGER, kind, new EncodedParams('')).length - 1;
}

/** What the calls a close() ended fail with. */
export const CLOSED = 'the guest was closed';
const HOST_VERSION = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version;

/** startGuest could not bring the guest up; the message says why and quotes its stderr. */
export class GuestStartError extends Error {
  constructor(message, { stderrTail = '', exitCode = null, signal = null, spawnError = null, cause } = {}) {
    super(message, cause ? { cause } : undefined);
    this.name = 'GuestStartError';
    this.stderrTail = stderrTail;
    this.exitCode = exitCode;
    this.signal = signal;
    this.spawnError = spawnError; // the code of a program that could not be started at all: ENOENT, EACCES
  }
}

/** Throws a TypeError naming what is wrong with translate()'s entries (the Node host's and loadMethodPlugin's), in
 * the words a guest refuses them with, `params.` aside, as the Python host does. */
export function checkEntries(entries) {
  const problem = entriesProblem(entries, 'entries');
  if (problem !== null) throw new TypeError(problem);
}

/** A guest process as the host sees it: started, sent batches, restarted, closed (startGuest returns one). */
export class HostedGuest {
  #command;
  #options;
  #connection = null;
  #slots = new Slots(1);
  #gate = new SoloGate();
  #restartTimes = [];
  #restarting = null;
  #abandonRestart = null; // (close() abandons a restart under way rather than wait for its initialize)
  #lastDeath = null;
  #cleanups = new Set();
  #closing = null;
  #capabilities = completeCapabilities({}, null);

  constructor(command, options) {
    this.#command = command;
    this.#options = options;
    /** The guest's initialize result (updated on restart). */
    this.info = null;
    /** How many times the guest was restarted. */
    this.restarts = 0;
    /** What was changed to accept the guest's results (lib/results.js), for the whole life of this host. */
    this.resultNotes = new ResultNotes();
  }

  /** The pid of the current guest process (also its process group id). */
  get pid() {
    return this.#connection?.pid ?? null;
  }

  /** The last lines the current guest process wrote to stderr. */
  get stderrTail() {
    return this.#connection?.stderrTail() ?? '';
  }

  /** The guest's capabilities, with the protocol's defaults filled in. */
  get capabilities() {
    return this.#capabilities;
  }

  /**
   * Spawn and initialize; on any failure the process is stopped and GuestStartError thrown. Once signal (an
   * AbortSignal) is aborted, the start is abandoned: the process (and its group) is ended.
   */
  async start(signal = null) {
    const { cwd, env, maxLineBytes, logger, startTimeoutMs, closeStepMs, cancelGraceMs } = this.#options;
    if (signal?.aborted) throw new GuestStartError(`guest \`${this.#command.join(' ')}\` was not started: its start was abandoned`);
    const connection = new Connection(this.#command, {
      cwd, env, maxLineBytes, logger, cancelGraceMs,
      onDeath: (error) => this.#died(connection, error),
    });
    this.#connection = connection;
    let result;
    const abandon = () => { connection.process.terminate(closeStepMs); };
    signal?.addEventListener('abort', abandon, { once: true });
    try {
      result = await connection.request('initialize', {
        protocol_versions: [PROTOCOL_VERSION],
        host: { name: 'mt-eval-bridge', version: HOST_VERSION },
        config: this.#options.config,
        shared_latency: true, // (results.js: matchResults)
      }, { timeoutMs: startTimeoutMs, hardTimeoutMs: startTimeoutMs });
      const problem = initializeProblem(result); // (a result the Python host would refuse is refused here too)
      if (problem) throw new Error(problem);
    } catch (error) {
      await connection.process.terminate(closeStepMs);
      if (signal?.aborted) {
        throw new GuestStartError(`guest \`${this.#command.join(' ')}\` was not started: its start was abandoned`, { cause: error });
      }
      throw this.#startError(connection, error);
    } finally {
      signal?.removeEventListener('abort', abandon);
    }
    connection.started = true;
    this.info = result;
    this.#capabilities = completeCapabilities(result.capabilities, this.#options.logger);
    this.#slots.setLimit(this.#capabilities.max_concurrency);
    return this;
  }

  #startError(connection, error) {
    const argv = this.#command.join(' ');
    let why;
    if (error.code === ErrorCode.TIMEOUT) why = startTimedOut(this.#options.startTimeoutMs);
    else if (connection.process.spawnError) {
      why = notStarted(this.#command, this.#options.cwd, connection.process.spawnError);
    } else if (error.code === ErrorCode.GUEST_EXITED) why = `stopped before answering initialize: ${error.message}`;
    else if (error.data?.not_a_guest) why = error.message;
    else if (error.data?.misnamed) why = `failed to start: ${error.message}`; // (its answer under another id)
    else if (error instanceof BridgeError) why = `refused initialize: ${error.message} (error ${error.code})`;
    else why = error.message;
    const tail = connection.stderrTail();
    const info = connection.process.exitInfo;
    return new GuestStartError(`guest \`${argv}\` ${why}${formatTail(tail)}`,
      { stderrTail: tail, exitCode: info?.code ?? null, signal: info?.signal ?? null,
        spawnError: connection.process.spawnError?.code ?? null, cause: error });
  }

  #died(connection, error) {
    this.#lastDeath = failureText(error);
    // Whatever the guest left running in its group is stopped too.
    const cleanup = connection.process.terminate(this.#options.closeStepMs)
      .finally(() => this.#cleanups.delete(cleanup));
    this.#cleanups.add(cleanup);
  }

  /** The live connection, or the promise of it once the guest, which died, is restarted (within the budget). */
  #ready() {
    // While a restart runs, the new process is alive but not yet initialized: wait for it.
    if (this.#restarting) return this.#restarting;
    if (this.#connection?.alive) return this.#connection;
    this.#restarting = this.#restart().finally(() => { this.#restarting = null; });
    return this.#restarting;
  }

  // Why the guest process is being replaced: what stopped it (known before the process has died), else how it ended
  // (its exit code or signal and stderr tail), or why it did not start.
  #goneBecause() {
    const stopped = this.#connection?.stopReason;
    return stopped ? `the guest was stopped: ${stopped}` : this.#lastDeath;
  }

  async #restart() {
    const { restarts, windowMs } = this.#options.restartBudget;
    const now = Date.now();
    this.#restartTimes = this.#restartTimes.filter((time) => now - time < windowMs);
    const productive = (this.#connection?.completed ?? 0) > 0; // it did work before it died: no crash loop
    const why = this.#goneBecause();
    if (!productive && this.#restartTimes.length >= restarts) {
      throw new Error(`the guest's crash-loop budget is exhausted (${restarts} restarts within `
        + `${windowMs / 1000} s); it last failed: ${why}`);
    }
    if (!productive) this.#restartTimes.push(now);
    this.restarts++;
    this.#options.logger.warn(`restarting the guest (restart ${this.restarts}) after: ${why}`);
    this.#abandonRestart = new AbortController();
    try {
      await this.start(this.#abandonRestart.signal);
    } catch (error) {
      if (this.#closing) throw new Error(CLOSED);
      this.#lastDeath = error.message.split('\n')[0];
      throw new Error(`restarting the guest failed: ${this.#lastDeath}${compactTail(error.stderrTail ?? '')}`);
    } finally {
      this.#abandonRestart = null;
    }
    return this.#connection;
  }

  /** Translate entries: one full result per entry, in entry order. Entries are split into requests of at most
   * max_batch entries (and batchSize, and the line limit), at most max_concurrency in flight. A config given here
   * that does not fit is a TypeError, as at the start (checkConfig), and nothing is sent. */
  async translate(entries, config) {
    if (this.#closing) throw new Error('the guest is closed');
    checkEntries(entries);
    const runConfig = config ?? this.#options.config;
    if (runConfig == null) throw new TypeError('translate needs a RunConfig: pass config, or options.config to startGuest');
    if (runConfig !== this.#options.config) checkConfig(runConfig, { decides: false }); // (the start's was checked then)
    // The guest never receives the gold: reference, references and options.goldFields (lib/gold.js).
    return this.#request('translate', methodView(entries, this.#options.goldFields), runConfig);
  }

  /**
   * Decide rows: one checked result per row, in row order (every question answered with a probability per
   * option, or failed with the reason). Batched and failing like translate().
   */
  async decide(rows, config) {
    if (this.#closing) throw new Error('the guest is closed');
    const problem = rowsProblem(rows);
    if (problem) throw new TypeError(problem);
    if (config != null && config !== this.#options.config) checkConfig(config, { decides: true }); // (as translate's)
    return this.#request('decide', rows, config ?? this.#options.config ?? {});
  }

  // A request the guest does not implement is not sent: each item fails with why. Text a guest cannot read (a lone
  // surrogate) fails its item at once; the others go in batches.
  #request(kind, items, config) {
    const missing = notImplemented(this.info, kind);
    if (missing) return items.map((item) => BATCHED[kind].fail(item.id, missing));
    return sendingOnlyValidText(items, config, BATCHED[kind], async (sendable) => {
      const batches = this.#batches(kind, sendable, config);
      if (batches.length === 1) return this.#runBatch(kind, batches[0], config); // the usual call
      const parts = await Promise.all(batches.map((batch) => this.#runBatch(kind, batch, config)));
      return parts.flat();
    });
  }

  // Consecutive slices of items, each small enough for one request line.
  #batches(kind, entries, config) {
    const cap = this.capabilities.max_batch ?? Infinity;
    const size = Math.min(cap, this.#options.batchSize);
    const limit = this.#options.maxLineBytes;
    if (entries.length > 0 && entries.length <= size) { // the usual call: all of it in one request, if that fits
      // (encoded once: the request is sent with this text)
      const params = JSON.stringify({ [BATCHED[kind].key]: entries, config });
      const envelope = BATCHED[kind].envelope;
      if (params.length * 3 + envelope <= limit || Buffer.byteLength(params) + envelope <= limit) {
        return [{ entries, params: new EncodedParams(params) }];
      }
    }
    const overhead = Buffer.byteLength(encode(request(Number.MAX_SAFE_INTEGER, kind, { [BATCHED[kind].key]: [], config })));
    const batches = [];
    let current = { entries: [], bytes: overhead };
    const flush = () => {
      if (current.entries.length) batches.push(current);
      current = { entries: [], bytes: overhead };
    };
    for (const entry of entries) {
      const bytes = Buffer.byteLength(JSON.stringify(entry)) + 1;
      if (overhead + bytes > limit) {
        flush();
        batches.push({ entries: [entry], error: `the entry is too large to send: its request would be over ${lineLimit(limit)}` });
        continue;
      }
      if (current.entries.length >= size || current.bytes + bytes > limit) flush();
      current.entries.push(entry);
      current.bytes += bytes;
    }
    flush();
    return batches;
  }

  async #runBatch(kind, batch, config, { alone = false, tries = 3 } = {}) {
    const { fail: failed, match } = BATCHED[kind];
    const fail = (message) => batch.entries.map((entry) => failed(entry.id, message));
    if (batch.error) return fail(batch.error);
    const send = () => this.#send(kind, batch, config);
    const { result, error } = await (alone ? this.#gate.alone(send) : this.#gate.shared(send));
    if (error?.data?.unsent && tries > 1) return this.#runBatch(kind, batch, config, { alone, tries: tries - 1 });
    if (error === undefined) {
      const strays = []; // (results matching no entry sent: dropped, and said once, as every host says it)
      const matched = match(batch.entries, result.results, {
        latencyS: result.latency_s, notes: this.resultNotes, tolerance: this.#options.tolerance, onUnknown: (raw) => strays.push(raw),
      });
      sayStrays(this.resultNotes, strays, (text) => this.#options.logger.warn(text));
      return matched;
    }
    if (!(error instanceof BridgeError)) return fail(error.message ?? String(error));
    if (this.#closing) { // (sent again, split or alone, it would not be sent at all)
      // A guest that answers its in-flight requests "cancelled" as it shuts down was closed, as one that exits is.
      return fail(error.code === ErrorCode.CANCELLED ? CLOSED : failureText(error));
    }
    if (aboutConfig(error)) { // every item carries the config: all fail alike, none is sent again (nor those left alone)
      if (alone) throw new ConfigRefused(error.message); // (to eachAlone, which fails the entries left with it)
      return fail(error.message);
    }
    if (error.code === ErrorCode.GUEST_EXITED || error.code === ErrorCode.TIMEOUT) {
      if (alone || (error.data?.alone && batch.entries.length === 1)) return fail(failureText(error));
      // The guest crashed, hung or was stopped with these entries in flight: each is sent alone, to find the one it fails on.
      return eachAlone(batch.entries, (entry) => this.#runBatch(kind, { entries: [entry] }, config, { alone: true }), failed);
    }
    if (batch.entries.length > 1 && error.code !== ErrorCode.CANCELLED) {
      const middle = Math.floor(batch.entries.length / 2);
      return [...await this.#runBatch(kind, { entries: batch.entries.slice(0, middle) }, config, { alone }),
        ...await this.#runBatch(kind, { entries: batch.entries.slice(middle) }, config, { alone })];
    }
    return fail(failureText(error));
  }

  // One request for a batch: {result} with a results list, or {error}.
  async #send(kind, batch, config) {
    if (!this.#slots.tryAcquire()) await this.#slots.acquire();
    try {
      if (this.#closing) return { error: new Error('the guest was closed before this request was sent') };
      let connection = this.#ready();
      if (connection instanceof Promise) { // (a live one is used without waiting a turn)
        try {
          connection = await connection;
        } catch (error) {
          return { error };
        }
      }
      const timeoutMs = this.#timeoutMs(config, batch.entries.length);
      const hardTimeoutMs = Math.max(this.#options.hardTimeoutMs, timeoutMs); // never short of the request's own timeout
      let result;
      try {
        result = await connection.request(kind, batch.params ?? { [BATCHED[kind].key]: batch.entries, config }, {
          timeoutMs, hardTimeoutMs, cancelOnTimeout: this.capabilities.cancel,
        });
      } catch (error) {
        return { error };
      }
      if (!isPlainObject(result) || !Array.isArray(result.results)) return { error: new WithoutResults(kind, result) };
      if (kind === 'translate') this.resultNotes.merge(result.normalised);
      return { result };
    } finally {
      this.#slots.release();
    }
  }

  // A request's deadline: the RunConfig's timeout_s per entry, else requestTimeoutMs.
  #timeoutMs(config, entries) {
    const perEntry = config?.timeout_s;
    if (typeof perEntry === 'number' && perEntry > 0) return perEntry * 1000 * Math.max(1, entries);
    return this.#options.requestTimeoutMs;
  }

  /** The method's card (object or null), asked of the guest. */
  async methodCard() {
    if (this.#closing) throw new Error('the guest is closed');
    const connection = await this.#ready();
    const result = await connection.request('method_card', {}, {
      timeoutMs: this.#options.requestTimeoutMs, hardTimeoutMs: this.#options.hardTimeoutMs,
    });
    return isPlainObject(result) ? result.card ?? null : null;
  }

  /** Stop the guest: shutdown request → end stdin → SIGTERM → SIGKILL to its process group, each step waiting at
   * most closeStepMs (a restart under way is abandoned). Resolves once nothing it started is running. */
  close() {
    this.#closing ??= (async () => {
      this.#abandonRestart?.abort();
      await this.#restarting?.catch(() => {});
      await this.#connection?.close(this.#options.closeStepMs);
      await Promise.all([...this.#cleanups]);
    })();
    return this.#closing;
  }
}

/**
 * Start a guest program (argv) and initialize it. Rejects with GuestStartError when it cannot be
 * spawned, refuses initialize, exits, or does not answer within startTimeoutMs, or when options.signal
 * is aborted first (the process is then ended).
 */
export async function startGuest(command, options = {}) {
  if (!Array.isArray(command) || command.length === 0 || !command.every((part) => typeof part === 'string')
    || command[0] === '') {
    throw new TypeError('command must be a non-empty array of strings, a program first, '
      + 'e.g. ["mt-eval", "serve", "my-plugin"]');
  }
  const complete = completeOptions(options);
  const guest = new HostedGuest([...command], complete);
  await guest.start(complete.signal);
  return checkGuestConfig(guest, complete.config);
}
