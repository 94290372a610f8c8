// JSON-RPC over one guest process, host side: request ids, per-request timeouts reset by
// progress, and the failure rules of the protocol (a bad line fails only the request it answers;
// the guest's death fails every pending request at once). A request that times out is cancelled, and
// a guest must answer it within cancelGraceMs: one that does not is not reading its input (its event
// loop is blocked) and is stopped, as is a guest that cannot cancel at all. Every failure says whether
// the request was `alone` in flight, and so certainly the one the guest failed on. An error without an id (a line
// the guest could not read) fails the one request in flight, and is logged when there are several; a request of
// this host's sent back fails that request (bridge/PROTOCOL.md, "An error without an id").
import { GuestProcess, LONGEST_DELAY } from './child.js';
import { AnswerProblem } from './host-failures.js';
import { invalidUtf8Offset } from './json-text.js';
import { LazyTimer } from './lazy-timer.js';
import { answeredWith, echoesRequest, watchHandshake } from './not-a-guest.js';
import { endStrays, outsideGroup } from './strays.js';
import { UnmatchedAnswers } from './unmatched.js';
import {
  BridgeError, ErrorCode, classify, decodeUtf8, encode, errorResponse, isPlainObject, lineBytes, lineLimit,
  notification, readMessageId, requestLine,
} from './protocol.js';

// The requests that carry a method's work (and say whether a guest is doing any).
const BATCHED = new Set(['translate', 'decide']);

const LOG_LEVELS = { debug: 'debug', info: 'info', warning: 'warn', warn: 'warn', error: 'error' };

/** A short description of a stdout line for the log. */
function excerpt(text, max = 200) {
  const flat = text.replace(/[\u0000-\u001f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, '0')}`);
  return flat.length > max ? `${flat.slice(0, max)}... (${text.length} characters)` : flat;
}

export function describeExit({ code, signal, error, running }) {
  if (error) return `the guest could not be started: ${error.message}`;
  if (running) return 'the guest closed its stdout';
  if (signal) return `the guest was killed by ${signal}`;
  return `the guest exited with code ${code}`;
}

// What a line that cannot be read fails the request it names with (in the Python host's words).
const NOT_JSON = 'guest sent a line that is not valid JSON';

// Why a guest that closed its stdin is stopped (in the Python host's words), once its exit has had the time to be seen.
const INPUT_CLOSED = 'it closed its input (stdin) while running, so nothing more could be sent to it';
const INPUT_GRACE_MS = 200;

const seconds = (ms) => `${Number((ms / 1000).toFixed(3))} s`;

export class Connection {
  /**
   * @param {string[]} command
   * @param {object} options cwd, env, maxLineBytes, cancelGraceMs, logger ({debug, info, warn, error}),
   *   onDeath(error)
   */
  constructor(command, { cwd, env, maxLineBytes, cancelGraceMs = 2_000, logger, onDeath }) {
    this.logger = logger;
    this.#unmatched = new UnmatchedAnswers(logger);
    this.maxLineBytes = maxLineBytes;
    this.cancelGraceMs = cancelGraceMs;
    this.pending = new Map();
    this.deadlines = new LazyTimer(() => this.#expireDue()); // the requests' deadlines, on one timer
    this.timedOut = new Set(); // ids given up on: a late answer is expected, not suspicious
    this.cancelling = new Map(); // cancelled id → the timer that stops a guest which never answers it
    this.nextId = 1;
    this.closing = false;
    this.deathError = null;
    this.stopReason = null;
    this.completed = 0; // translate and decide requests answered: a guest that did work is not crash-looping
    this.started = false; // set by the host once initialize is answered: a guest that ends before is reported by its start
    this.onDeath = onDeath;
    this.process = new GuestProcess(command, {
      cwd,
      env,
      maxLineBytes,
      onLine: (line) => this.#line(line),
      onOverflow: ({ id, bytes, whole }) => this.#overflow(id, bytes, whole),
      onStderrLine: (line) => logger.info(`[guest ${this.process?.pid ?? '?'}] ${line}`),
      onDeath: (info) => this.#death(info),
    });
    this.pid = this.process.pid;
    // A guest whose stdin closed (a write failed, EPIPE) can be sent nothing: it is stopped, as if it had exited, not
    // left to each request's deadline (after the grace an exiting guest has to be reported as it ended).
    this.process.child.stdin?.once('close', () => {
      if (this.closing) return;
      setTimeout(() => {
        if (!this.closing && !this.process.exitInfo) this.stop(INPUT_CLOSED);
      }, INPUT_GRACE_MS).unref();
    });
  }

  get alive() {
    return this.process.alive && this.stopReason === null;
  }

  stderrTail() {
    return this.process.stderrTail();
  }

  /**
   * Send a request; resolves with its result or rejects with a BridgeError. params may be EncodedParams (JSON text
   * the caller already made). timeoutMs restarts on every progress notification for this request; hardTimeoutMs
   * does not.
   */
  async request(method, params, { timeoutMs = Infinity, hardTimeoutMs = Infinity, cancelOnTimeout = false } = {}) {
    // A guest that has not answered a cancel yet may be stuck: nothing new is sent until that is known.
    if (this.cancelling.size) {
      await new Promise((resolve) => {
        this.#settledWaiters.push(resolve);
        this.#holdIfBusy();
      });
    }
    if (this.deathError) {
      throw new BridgeError(this.deathError.code, this.deathError.message, { ...this.deathError.data, unsent: true });
    }
    const result = await this.#request(method, params, { timeoutMs, hardTimeoutMs, cancelOnTimeout });
    if (BATCHED.has(method)) this.completed++;
    return result;
  }

  #settledWaiters = [];
  #timeouts = 0; // translate and decide requests that timed out so far (whether a request was alone in flight)

  #cancelSettled(id) {
    if (id === undefined) {
      for (const timer of this.cancelling.values()) clearTimeout(timer);
      this.cancelling.clear();
    } else {
      clearTimeout(this.cancelling.get(id));
      this.cancelling.delete(id);
    }
    if (this.cancelling.size === 0) for (const wake of this.#settledWaiters.splice(0)) wake();
    this.#holdIfBusy();
  }

  // The guest keeps this process running while anything waits on it (a request in flight or waiting to be sent, a
  // cancel not answered yet, its close); an idle one does not, so a program that never closes it still ends (the
  // guest is then ended as the process exits: child.js).
  #holdIfBusy() {
    this.process.hold(this.closing || this.pending.size > 0 || this.cancelling.size > 0 || this.#settledWaiters.length > 0);
  }

  /** Translate and decide requests in flight. */
  get inFlight() {
    let count = 0;
    for (const pending of this.pending.values()) if (BATCHED.has(pending.method)) count++;
    return count;
  }

  /** Kill the guest's process group now; pending requests fail with "the guest was stopped: reason". */
  stop(reason) {
    if (!this.process.alive || this.stopReason) return;
    this.stopReason = reason;
    this.logger.warn(`stopping the guest (pid ${this.pid}): ${reason}`);
    this.process.signalGroup('SIGKILL');
  }

  #request(method, params, { timeoutMs, hardTimeoutMs, cancelOnTimeout }) {
    if (this.deathError) return Promise.reject(this.deathError);
    const id = this.nextId++;
    const line = requestLine(id, method, params);
    // (a string of n UTF-16 units is at most 3n bytes of UTF-8: only a long one needs counting)
    if (line.length * 3 > this.maxLineBytes + 1 && Buffer.byteLength(line) - 1 > this.maxLineBytes) {
      return Promise.reject(new BridgeError(ErrorCode.MESSAGE_TOO_LARGE,
        `the ${method} request is over ${lineLimit(this.maxLineBytes)}`));
    }
    return new Promise((resolve, reject) => {
      const pending = { id, method, resolve, reject, unmatchedMark: this.#unmatched.mark, timedOutMark: this.#timeouts };
      const expire = (hard) => {
        const ms = hard ? hardTimeoutMs : timeoutMs;
        this.timedOut.add(id);
        if (this.timedOut.size > 1000) this.timedOut.delete(this.timedOut.values().next().value);
        // (alone in flight, and none timed out while it was: those stuck behind a blocked one time out one by one)
        const alone = this.inFlight <= 1 && pending.timedOutMark === this.#timeouts;
        if (BATCHED.has(method)) this.#timeouts += 1;
        this.#settle(id, new BridgeError(ErrorCode.TIMEOUT, // (in the Python host's words)
          `${method} request ${hard ? `hit the hard cap of ${seconds(ms)}` : `got no answer or progress within ${seconds(ms)}`}`
          + this.#unmatched.cause(pending), { alone }));
        if (method === 'initialize' || method === 'shutdown') return;
        if (!cancelOnTimeout) {
          this.stop(`it cannot cancel, and request ${id} timed out`);
          return;
        }
        this.notify('cancel', { id });
        const timer = setTimeout(() => this.stop(`it did not answer the cancel of request ${id} within `
          + `${seconds(this.cancelGraceMs)} (is its event loop blocked?)`), Math.min(this.cancelGraceMs, LONGEST_DELAY));
        timer.unref?.();
        this.cancelling.set(id, timer);
        this.#holdIfBusy();
      };
      const now = performance.now();
      Object.assign(pending, { expire, idleMs: timeoutMs, idleAt: now + timeoutMs, hardAt: now + hardTimeoutMs });
      this.deadlines.ensure(Math.min(pending.idleAt, pending.hardAt));
      this.pending.set(id, pending);
      this.#holdIfBusy();
      this.process.write(line);
      if (method === 'initialize') pending.unwatch = watchHandshake(this.pid, (what) => this.#notAGuest(id, what));
    });
  }

  // The deadlines' timer fired: every request past a deadline times out (the earlier of its two first), and the timer
  // is armed again for the next.
  #expireDue() {
    const now = performance.now();
    let next = Infinity;
    for (const pending of [...this.pending.values()]) {
      const due = Math.min(pending.idleAt, pending.hardAt);
      if (this.pending.get(pending.id) !== pending) continue; // settled meanwhile
      if (due <= now) pending.expire(pending.hardAt <= pending.idleAt);
      else next = Math.min(next, due);
    }
    if (this.pending.size) this.deadlines.ensure(next);
  }

  notify(method, params) {
    this.process.write(encode(notification(method, params)));
  }

  /**
   * Stop the guest, escalating: shutdown request (stepMs) → end stdin (stepMs) → SIGTERM to the
   * group (stepMs) → SIGKILL. Requests still pending when it dies fail as closed.
   */
  async close(stepMs) {
    this.closing = true;
    const proc = this.process;
    this.#holdIfBusy(); // (until the guest has ended)
    // A cancel not answered yet no longer matters: the guest is closed within its steps, not waited for.
    this.#cancelSettled();
    const strays = outsideGroup(proc.pid); // (read now: once the guest ends, they are no longer known as its own)
    if (proc.alive) {
      await Promise.race([
        this.#request('shutdown', {}, { timeoutMs: stepMs, hardTimeoutMs: Infinity }).catch(() => {}),
        proc.exited,
      ]);
      proc.endInput();
      await proc.waitExit(stepMs);
    }
    await proc.terminate(stepMs);
    await endStrays(strays, stepMs, (text) => this.logger.warn(text));
  }

  #settle(id, error, result) {
    const pending = this.pending.get(id);
    if (!pending) return false;
    this.pending.delete(id);
    pending.unwatch?.();
    if (this.pending.size === 0) {
      this.deadlines.idle();
      this.#holdIfBusy();
    }
    if (error) pending.reject(error);
    else pending.resolve(result);
    return true;
  }

  #overflow(id, bytes, whole) { // (in the Python host's words)
    const error = new BridgeError(ErrorCode.MESSAGE_TOO_LARGE,
      `guest sent a line of ${lineBytes(bytes, whole)}, over ${lineLimit(this.maxLineBytes)}`);
    if (!(typeof id === 'number' && this.#settle(id, error))) {
      this.logger.warn(`skipped a guest stdout line over ${this.maxLineBytes} bytes (id ${JSON.stringify(id ?? null)})`);
    }
  }

  #line(bytes) {
    const text = decodeUtf8(bytes);
    if (text === null) {
      const id = readMessageId(bytes.subarray(0, 4096));
      const bad = invalidUtf8Offset(bytes); // (in the Python host's words: mt_eval.bridge.messages.not_utf8)
      const error = new AnswerProblem(ErrorCode.PARSE_ERROR, 'guest sent a line that is not valid UTF-8 '
        + `(byte 0x${bytes[bad].toString(16).padStart(2, '0')} at offset ${bad})`);
      if (!(typeof id === 'number' && this.#settle(id, error))) {
        this.logger.warn(`skipped a guest stdout line that is not valid UTF-8 (${bytes.length} bytes)`);
      }
      return;
    }
    let message;
    try {
      message = JSON.parse(text);
    } catch {
      // (a line that starts as an answer but is no JSON, as a NaN makes it: it fails the request it names at once,
      // as in the Python host, rather than leave it to its deadline)
      const id = readMessageId(text.slice(0, 4096));
      if (this.pending.get(id)?.method === 'initialize' && echoesRequest(text)) { // (a text filter, the id kept)
        this.#notAGuest(id, answeredWith(text));
        return;
      }
      if (typeof id === 'number' && this.#settle(id, new AnswerProblem(ErrorCode.PARSE_ERROR, NOT_JSON))) return;
      message = undefined;
    }
    if (!isPlainObject(message)) {
      if (text.trim()) this.logger.warn(`skipped a guest stdout line that is not a JSON object: ${excerpt(text)}`);
      this.#textDuringHandshake(text);
      return;
    }
    switch (classify(message)) {
      case 'response': return this.#response(message);
      case 'notification': return this.#notification(message);
      case 'request': return this.#guestRequest(message);
      default:
        // An object with an id and no method is read as the answer it names, as the Python host reads it: without
        // "jsonrpc": "2.0", with both a result and an error (the error counts, unless null) or with neither (a failure);
        // one with a method and no id, as the notification it is.
        if (typeof message.method !== 'string' && 'id' in message) return this.#response(message);
        if (typeof message.method === 'string' && !('id' in message)) return this.#notification(message); // (log, progress)
        this.logger.warn(`skipped a guest stdout line that is not a JSON-RPC 2.0 message: ${excerpt(text)}`);
        this.#textDuringHandshake(text);
    }
  }

  // A line that is no message but carries the words of the initialize request still unanswered: a text filter.
  #textDuringHandshake(text) {
    const initialize = [...this.pending.values()].find((pending) => pending.method === 'initialize');
    if (initialize && echoesRequest(text)) this.#notAGuest(initialize.id, answeredWith(text));
  }

  #notAGuest(id, what) {
    this.#settle(id, new BridgeError(ErrorCode.INVALID_REQUEST, `is not a bridge guest: ${what}, as a text filter `
      + 'does; a guest must speak mt-eval-bridge/1 (bridge/PROTOCOL.md)', { not_a_guest: true }));
  }

  #response(message) {
    const { id, result, error } = message;
    let failure;
    if (error !== undefined && error !== null) { // ("error": null beside a result: none, as JSON-RPC 1.0 wrote it)
      failure = isPlainObject(error) && Number.isInteger(error.code)
        ? new BridgeError(error.code, typeof error.message === 'string' ? error.message : 'error', error.data)
        : new BridgeError(ErrorCode.INTERNAL_ERROR, `malformed error from the guest: ${excerpt(JSON.stringify(error))}`);
    }
    if (failure === undefined && !('result' in message)) {
      failure = new AnswerProblem(ErrorCode.INVALID_REQUEST, 'guest sent a response with neither result nor error');
    }
    if (id === null && failure) return this.#unattributed(failure);
    if (this.cancelling.has(id)) this.#cancelSettled(id); // it answered: it is still reading its input
    if (this.#settle(id, failure, result)) return;
    if (this.timedOut.delete(id)) this.logger.debug(`dropped the late answer to timed-out request ${id}`);
    else {
      const refused = this.#unmatched.add(id, this.pending); // (initialize under its id as a string: it fails at once)
      if (refused) this.#settle(refused.id, new BridgeError(ErrorCode.INVALID_REQUEST, refused.message, { misnamed: true }));
    }
  }

  #unmatched; // (answers naming no request in flight: an UnmatchedAnswers, made with the logger)

  // A guest sends no requests: one of this host's own, sent back, fails it (the program copies its input, as cat
  // does); any other is answered "method not found".
  #guestRequest({ id, method }) {
    if (this.pending.get(id)?.method === method) {
      const what = `it sent the ${method} request back instead of answering it`;
      if (method === 'initialize') this.#notAGuest(id, what);
      else this.#settle(id, new BridgeError(ErrorCode.INVALID_REQUEST, `the guest ${what}`));
      return;
    }
    this.process.write(encode(errorResponse(id, ErrorCode.METHOD_NOT_FOUND, `the host does not serve "${method}"`)));
  }

  // An error with "id": null: the guest could not read a line (or tell which request it was). The one request in
  // flight fails with it; with several, none can be blamed, and they are left to their deadlines.
  #unattributed(failure) {
    if (this.pending.size === 1) {
      this.#settle(this.pending.keys().next().value, failure);
      return;
    }
    const which = this.pending.size ? `which of the ${this.pending.size} requests in flight it meant cannot be told `
      + '(they wait for their deadlines)' : 'no request was in flight';
    this.logger.warn(`the guest answered error ${failure.code} without a request id; ${which}: ${failure.message}`);
  }

  #notification({ method, params }) {
    const p = isPlainObject(params) ? params : {};
    if (method === 'progress') {
      const pending = this.pending.get(p.id);
      if (pending) pending.idleAt = performance.now() + pending.idleMs; // (the timer finds it moved when it fires)
      this.logger.debug(`guest progress on request ${JSON.stringify(p.id)}: ${p.done}/${p.total}${p.message ? ` ${p.message}` : ''}`);
    } else if (method === 'log') {
      const level = LOG_LEVELS[p.level] ?? 'info';
      this.logger[level](`[guest ${this.pid}] ${typeof p.message === 'string' ? p.message : JSON.stringify(p.message)}`);
    } else {
      this.logger.debug(`ignored guest notification "${method}"`);
    }
  }

  #death(info) {
    let what = this.closing && !info.error ? 'the guest was closed' : describeExit(info);
    if (this.stopReason && !this.closing) what = `the guest was stopped: ${this.stopReason}`;
    const tail = this.process.stderrTail();
    const inFlight = this.inFlight;
    this.deathError = new BridgeError(ErrorCode.GUEST_EXITED, what,
      { exit_code: info.code, signal: info.signal, stderr_tail: tail, alone: inFlight <= 1 });
    // A program that could not be started, or that ended before it answered initialize, is reported once, by
    // whoever started it (GuestStartError).
    if (this.started && !this.closing && !this.stopReason && !info.error) this.logger.warn(`${describeExit(info)} (pid ${this.pid})`);
    for (const [id, pending] of [...this.pending]) { // (not alone when another timed out while it was in flight)
      const error = this.deathError;
      const alone = inFlight <= 1 && pending.timedOutMark === this.#timeouts;
      this.#settle(id, alone === error.data.alone ? error : new BridgeError(error.code, error.message, { ...error.data, alone }));
    }
    this.deadlines.cancel();
    this.#cancelSettled();
    this.onDeath?.(this.deathError, info);
  }
}
