// The Node guest: serves a translate.js method over mt-eval-bridge/1 (on stdin/stdout: guest-process.js).
// The method module exports `translate(entries, config)` and/or `decide(rows, config)` (async; what its
// method.json "implements") and optionally `name`, `capabilities`, `methodCard()` and `close()`; a default
// export holding them works too.
import { declaredDefaults } from './contract/declared-defaults.js';
import { got } from './contract/value-words.js';
import { notACard } from './contract/words.js';
import {
  DEFAULT_MAX_LINE_BYTES, ErrorCode, LineSplitter, SUPPORTED_VERSIONS, classify, decodeUtf8, describe, encode,
  errorResponse, isPlainObject, isValidId, lineBytes, resultResponse,
} from './protocol.js';
import { Job, entriesProblem, failureMessage, failureType, guestVersion, idKey, thrownText } from './guest-requests.js';
import { CallSlots } from './guest-slots.js';
import { wellFormedJson } from './lone-surrogates.js';
import { strayStandIn } from './unmatched.js';

/** What this guest declares at initialize: the protocol's defaults, but 64 calls at once (or the method's) and cancel. */
export const GUEST_CAPABILITIES = Object.freeze({
  ...declaredDefaults('bridge-initialize-result', 'Capabilities'), max_concurrency: 64, cancel: true,
});

// What turns a method's answers into results and completes configs (./results.js, with the contract's decoder) is
// loaded once initialize is answered, while the host prepares its first request; the rules of decisions
// (./decisions.js) when a method that implements decide is loaded. A guest is ready sooner without them.
let resultRules = null;
let decisionRules = null;
let resultsLoading = null;
const loadResults = () => (resultsLoading ??= import('./results.js').then((module) => { resultRules = module; }));
const loadDecisions = () => import('./decisions.js').then((module) => { decisionRules = module; });

/** The protocol state machine of one guest process. */
export class GuestServer {
  /**
   * @param {object} options
   * @param {() => Promise<object>} options.load resolves to what loadMethod returns
   * @param {(line: string, callback?: () => void) => void} options.write writes one protocol line
   * @param {(text: string) => void} options.log writes a diagnostic line to stderr
   * @param {(code: number) => void} options.exit called once all work is answered after input ends
   * options.settleMs and options.maxAbandoned: what becomes of cancelled calls the method does not return from (guest-slots.js)
   */
  constructor({ load, write, log, exit, maxLineBytes = DEFAULT_MAX_LINE_BYTES, settleMs, maxAbandoned }) {
    this.load = load;
    this.writeLine = write;
    this.log = log;
    this.exit = exit;
    this.maxLineBytes = maxLineBytes;
    this.method = null;
    this.loadFailed = false;
    this.initializing = false; // while initialize is being answered
    this.initialized = false;
    this.shuttingDown = false;
    this.inputEnded = false;
    this.exiting = false;
    this.unanswered = 0; // requests read but not yet answered
    this.jobs = new Map(); // idKey → translate or decide job not yet answered
    this.slots = new CallSlots(GUEST_CAPABILITIES.max_concurrency, {
      start: (job) => this.run(job), log, settleMs, maxAbandoned, tooMany: () => this.quit(1),
    });
    this.held = null; // the lines read from initialize on, until the guest is ready for them (release)
    this.defaultConfig = null;
    this.sharedLatency = false; // the host reads a translate answer's latency_s (initialize's shared_latency)
    this.splitter = new LineSplitter({
      maxLineBytes,
      onLine: (line) => this.handleLine(line),
      onOverflow: ({ id, bytes, whole }) => { // (in the Python guest's words)
        this.log(`request line over ${maxLineBytes} bytes discarded (${lineBytes(bytes, whole)})`);
        this.send(errorResponse(isValidId(id) ? id : null, ErrorCode.MESSAGE_TOO_LARGE,
          `request of ${lineBytes(bytes, whole)} is over the ${maxLineBytes}-byte limit`));
      },
    });
  }

  push(chunk) {
    this.splitter.push(chunk);
  }

  end() {
    this.splitter.end();
    this.inputEnded = true;
    this.maybeExit();
  }

  // Every line written is well-formed Unicode: a lone surrogate in what a method gave (an exception's message, a
  // decision) is written as U+FFFD, so the host can read the rest (lone-surrogates.js).
  send(message) {
    let line;
    try {
      line = wellFormedJson(encode(message));
    } catch (error) {
      line = encode(errorResponse(message.id, ErrorCode.INTERNAL_ERROR,
        `the response cannot be encoded as JSON: ${error.message}`));
    }
    // (a string of n UTF-16 units is at most 3n bytes of UTF-8: only a long one needs counting)
    if (line.length * 3 > this.maxLineBytes && Buffer.byteLength(line) - 1 > this.maxLineBytes) {
      line = encode(errorResponse(message.id, ErrorCode.MESSAGE_TOO_LARGE,
        `message too large: the response is over the ${this.maxLineBytes}-byte limit`));
    }
    this.writeLine(line);
  }

  answer(id, message) {
    this.unanswered--;
    this.send(message);
    this.maybeExit();
  }

  // Ends the guest now, whatever is in flight (its host fails it and starts another guest).
  quit(code) {
    if (this.exiting) return;
    this.exiting = true;
    this.exit(code);
  }

  maybeExit() {
    if (!this.inputEnded || this.unanswered > 0 || this.held !== null || this.exiting) return;
    this.exiting = true;
    const close = this.method?.close;
    Promise.resolve()
      .then(() => close?.())
      .catch((error) => this.log(`close() failed: ${thrownText(error)}`))
      .finally(() => this.exit(this.loadFailed ? 1 : 0));
  }

  // Stdin has closed and Node has nothing left to run: what the method does waits on a promise that nothing can
  // settle. Its calls are cancelled (as the Python guest cancels those still running 5 s after its input ended),
  // rather than left unanswered by a quiet exit; a request waiting on anything else (the module's top-level await,
  // methodCard()) ends the guest with status 1.
  abandon() {
    if (!this.inputEnded || this.exiting || this.unanswered === 0) return;
    const what = this.method === null ? "the method's module (a top-level await)" : this.initialized ? 'the method'
      : 'methodCard()';
    this.log(`stdin closed while ${this.unanswered} request(s) wait on ${what}, which waits on a promise that nothing `
      + `can settle: ${this.initialized ? 'cancelled' : 'not answered'}`);
    for (const job of [...this.jobs.values()]) this.cancel(job.id);
    this.quit(1);
  }

  handleLine(bytes) {
    if (this.held !== null) { // (a copy: the splitter's line may share memory with its input)
      this.held.push(Buffer.from(bytes));
      return;
    }
    const text = decodeUtf8(bytes);
    if (text === null) {
      this.send(errorResponse(null, ErrorCode.PARSE_ERROR, 'parse error: the line is not valid UTF-8'));
      return;
    }
    let message;
    try {
      message = JSON.parse(text);
    } catch (error) {
      if (text.trim() === '') return; // a blank line (it never parses) is skipped
      this.send(errorResponse(null, ErrorCode.PARSE_ERROR, `parse error: ${error.message}`));
      return;
    }
    const kind = classify(message);
    if (kind === 'notification') {
      if (message.method === 'cancel' && isPlainObject(message.params)) this.cancel(message.params.id);
    } else if (kind === 'request') {
      this.unanswered++;
      let pending;
      try {
        pending = this.dispatch(message);
      } catch (error) {
        this.internalError(message.id, error);
        return;
      }
      pending?.catch((error) => this.internalError(message.id, error));
    } else {
      const id = isPlainObject(message) && isValidId(message.id) ? message.id : null;
      this.send(errorResponse(id, ErrorCode.INVALID_REQUEST,
        'invalid request: expected a JSON-RPC 2.0 object with "jsonrpc": "2.0", a "method" and an integer or string "id" (none in a notification)'));
    }
  }

  internalError(id, error) {
    this.log(`internal error: ${thrownText(error)}`);
    this.answer(id, errorResponse(id, ErrorCode.INTERNAL_ERROR, `internal error: ${error?.message}`));
  }

  fail(id, code, text, data) {
    this.answer(id, errorResponse(id, code, text, data));
  }

  // Answers the request, or returns a promise of doing so: a translate or decide request is enqueued at once,
  // without a promise of its own, as soon as the guest is initialized (the path every call takes).
  dispatch({ id, method, params = {} }) {
    if (!isPlainObject(params)) return this.fail(id, ErrorCode.INVALID_PARAMS, `params must be an object, got ${got(params)}`);
    if (method === 'initialize') return this.initialize(id, params, (...why) => this.fail(id, ...why));
    return this.dispatchInitialized(id, method, params);
  }

  dispatchInitialized(id, method, params) {
    if (!this.initialized) {
      return this.fail(id, ErrorCode.NOT_INITIALIZED, this.loadFailed ? 'not initialized: the method failed to load'
        : `not initialized: send "initialize" before "${method}"`);
    }
    if (this.shuttingDown && method !== 'shutdown') {
      return this.fail(id, ErrorCode.INVALID_REQUEST, 'the guest is shutting down: no new requests');
    }
    switch (method) {
      case 'translate':
      case 'decide':
        if (!this.method.implements.includes(method)) {
          return this.fail(id, ErrorCode.METHOD_NOT_FOUND,
            `this method does not implement ${method} (it implements ${this.method.implements.join(', ')})`);
        }
        return method === 'translate' ? this.translate(id, params) : this.decide(id, params);
      case 'method_card': return this.methodCard(id, (...why) => this.fail(id, ...why));
      case 'shutdown':
        this.shuttingDown = true;
        return this.answer(id, resultResponse(id, null));
      default: return this.fail(id, ErrorCode.METHOD_NOT_FOUND, `method not found: ${JSON.stringify(method)}`);
    }
  }

  async initialize(id, params, fail) {
    if (this.initialized || this.initializing) return fail(ErrorCode.INVALID_REQUEST, 'already initialized');
    const offered = params.protocol_versions;
    if (!Array.isArray(offered)) {
      return fail(ErrorCode.INVALID_PARAMS, `params.protocol_versions must be a list, got ${got(offered)}`);
    }
    const chosen = offered.find((version) => SUPPORTED_VERSIONS.includes(version));
    if (chosen === undefined) {
      return fail(ErrorCode.UNSUPPORTED_VERSION,
        `unsupported protocol version: offered ${JSON.stringify(offered)}, this guest speaks ${SUPPORTED_VERSIONS.join(', ')}`,
        { supported: [...SUPPORTED_VERSIONS] });
    }
    if (params.config !== undefined && params.config !== null) {
      if (!isPlainObject(params.config)) {
        return fail(ErrorCode.INVALID_PARAMS, `invalid config: expected an object, got ${got(params.config)}`);
      }
      this.defaultConfig = params.config; // checked, with its defaults filled in, by the requests that use it
    }
    this.sharedLatency = params.shared_latency === true;
    this.initializing = true;
    this.held = []; // what comes next waits, in order, until the method is loaded and the rules with it
    try {
      this.method = await this.load();
      this.slots.size = this.method.capabilities?.max_concurrency ?? this.slots.size; // (nothing runs before this)
      if (this.method.implements.includes('decide')) await loadDecisions();
      const card = await this.card();
      this.initialized = true;
      this.answer(id, resultResponse(id, {
        protocol_version: chosen,
        method: { name: this.method.name, method_id: this.method.methodId },
        card,
        capabilities: { ...GUEST_CAPABILITIES, ...this.method.capabilities },
        guest: { name: 'mt-eval-guest', version: guestVersion(), runtime: `node ${process.version}` },
        implements: [...this.method.implements],
      }));
      setImmediate(() => loadResults().then(() => this.release(), (error) => { // after the answer is written
        this.log(`cannot load the guest's rules: ${thrownText(error)}`);
        this.exit(1);
      }));
    } catch (error) {
      this.loadFailed = true;
      this.log(`cannot load the method: ${error?.message ?? error}`);
      fail(ErrorCode.INTERNAL_ERROR, `cannot load the method: ${error?.message ?? error}`,
        { type: failureType(error) });
      this.release(); // (each request that waited is told the method failed to load)
    } finally {
      this.initializing = false;
    }
  }

  // The method's card for initialize: a methodCard() that throws, or returns what is not a card, fails the start
  // (as a Python method's method_card() does), with the module's file, what went wrong and the fix.
  async card() {
    if (!this.method.methodCard) return null;
    const { reportedCard } = await import('./method-load.js'); // (loaded already: it loaded the method)
    const card = await reportedCard(this.method);
    const problem = notACard('methodCard()', card);
    if (!problem) return card;
    const { MethodCardError } = await import('./load-errors.js');
    throw new MethodCardError(this.method.file, problem.message, problem.hint);
  }

  // Asked again: what fails now fails this request, in the words initialize would have been refused with.
  async methodCard(id, fail) {
    let card;
    try {
      card = await this.card();
    } catch (error) {
      return fail(ErrorCode.METHOD_FAILED, error.message, { type: failureType(error) });
    }
    return this.answer(id, resultResponse(id, { card }));
  }

  translate(id, params) {
    const problem = entriesProblem(params.entries);
    if (problem) return this.fail(id, ErrorCode.INVALID_PARAMS, problem);
    const raw = params.config ?? this.defaultConfig;
    if (raw === null) return this.fail(id, ErrorCode.INVALID_PARAMS, 'params.config is missing and initialize gave none');
    const config = resultRules.completeRunConfig(raw);
    if (typeof config === 'string') return this.fail(id, ErrorCode.INVALID_PARAMS, config);
    return this.enqueue('translate', id, params.entries, config);
  }

  decide(id, params) {
    const problem = decisionRules.rowsProblem(params.rows, 'params.rows');
    if (problem) return this.fail(id, ErrorCode.INVALID_PARAMS, problem);
    const config = resultRules.completeDecisionConfig(params.config ?? this.defaultConfig ?? {});
    if (typeof config === 'string') return this.fail(id, ErrorCode.INVALID_PARAMS, config);
    return this.enqueue('decide', id, params.rows, config);
  }

  // The guest is ready: the lines read since initialize are handled, in the order read — so a request never
  // overtakes one before it (a shutdown the translate requests sent before it), and a cancel finds its request.
  release() {
    const waiting = this.held;
    this.held = null;
    for (const line of waiting) {
      if (this.held === null) this.handleLine(line);
      else this.held.push(line);
    }
    this.maybeExit();
  }

  enqueue(kind, id, items, config) {
    const key = idKey(id);
    if (this.jobs.has(key)) {
      return this.fail(id, ErrorCode.INVALID_REQUEST, `request id ${JSON.stringify(id)} is already in flight`);
    }
    const job = new Job(kind, id, key, items, config);
    this.jobs.set(key, job);
    this.slots.admit(job);
    return undefined;
  }

  cancel(id) {
    if (!isValidId(id)) return;
    const job = this.jobs.get(idKey(id));
    if (!job) return; // unknown or already answered
    this.jobs.delete(job.key);
    job.cancelled = true;
    job.controller?.abort();
    this.slots.cancelled(job); // (its slot frees when the method settles, or once it is abandoned)
    this.answer(job.id, errorResponse(job.id, ErrorCode.CANCELLED, 'cancelled'));
  }

  async run(job) {
    const started = performance.now();
    let value;
    let failed = false;
    try {
      value = await this.method[job.kind](job.entries, job.config, job);
    } catch (error) {
      failed = true;
      value = error;
    }
    // A cancelled job was answered already, and what the method returned is dropped.
    if (this.jobs.get(job.key) === job) {
      this.jobs.delete(job.key);
      const latency = job.entries.length ? (performance.now() - started) / 1000 / job.entries.length : 0;
      let response;
      try {
        response = this.respond(job, value, failed, latency);
      } catch (error) { // (what the method returned defeated the checks: the host splits the call to find it)
        this.log(`the ${job.kind} results cannot be sent: ${thrownText(error)}`);
        response = errorResponse(job.id, ErrorCode.METHOD_FAILED, `the method's results cannot be sent: ${failureMessage(error)}`,
          { type: failureType(error) });
      }
      this.answer(job.id, response);
    }
    this.slots.settled(job);
  }

  // The response to a translate or decide job: results in the full protocol shape (translate: checked and
  // compacted; decide: as the method gave them, for the host checks every answer against its question, but for the
  // numbers JSON cannot carry, said here), each with its share of the call's time when the method reported none.
  // (`failed`: the method threw `value`)
  respond(job, value, failed, latency) {
    const { kind, id } = job;
    if (failed) {
      const error = value;
      this.log(`${kind} failed: ${thrownText(error)}`);
      return errorResponse(id, ErrorCode.METHOD_FAILED, failureMessage(error), { type: failureType(error) });
    }
    if (kind === 'translate') {
      return resultResponse(id, resultRules.translateAnswer(value, job.entries, latency, { shared: this.sharedLatency }));
    }
    if (!Array.isArray(value)) { // each row fails in the words of an in-process method's host (decisions.js)
      const error = `the method returned ${describe(value)}, not a list with one result per row`;
      return resultResponse(id, { results: job.entries.map((row) => ({ id: row.id, error })) });
    }
    const results = [];
    for (const item of value) {
      if (!isPlainObject(item) || typeof item.id !== 'string' || item.id === '') results.push(strayStandIn(item)); // (the host says it)
      else results.push(item.latency_s === undefined ? { ...item, latency_s: latency } : item);
    }
    return resultResponse(id, { results: decisionRules.sendableDecisions(job.entries, results) });
  }
}
