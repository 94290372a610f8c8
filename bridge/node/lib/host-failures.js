// What a method's failure says in an error message: a guest request's failure as each entry's error (and an
// in-process call's, in the same words), and the last lines of the guest's stderr, compact (one line) or indented.
import { statSync } from 'node:fs';

import { failureMessage, failureType } from './guest-requests.js';
import { capped, lastUnits, writable } from './lone-surrogates.js';
import { BridgeError, ErrorCode, describe } from './protocol.js';

/**
 * A guest answered a batched request without a "results" list: the request failed as a whole, and is split to
 * find the entry it concerns, as for a line that cannot be read.
 */
export class WithoutResults extends BridgeError {
  constructor(kind, result) {
    super(ErrorCode.INTERNAL_ERROR, `the guest answered ${kind} without a "results" list (got ${describe(result?.results)})`);
    this.name = 'WithoutResults';
  }
}

/**
 * A line of the guest's that this host cannot take as an answer (not UTF-8, not JSON, neither a result nor an
 * error): it fails the request it names in this host's words, which are no guest's error.
 */
export class AnswerProblem extends BridgeError {
  constructor(code, message) {
    super(code, message);
    this.name = 'AnswerProblem';
  }
}

/** Why a guest is not sent a `kind` request (translate, decide): it does not implement it; null when it does. */
export function notImplemented(info, kind) {
  const implemented = Array.isArray(info?.implements) ? info.implements : ['translate'];
  return implemented.includes(kind) ? null : `the guest does not implement ${kind} (it implements ${implemented.join(', ')})`;
}

/**
 * Why a guest's program could not be started at all (`spawnError`: the spawn's own error, ENOENT or EACCES), in
 * the user's terms: a working directory that is not there is named, not blamed on the program.
 */
export function notStarted(command, cwd, spawnError) {
  if (cwd !== undefined && cwd !== null && !statSync(cwd, { throwIfNoEntry: false })?.isDirectory()) {
    return `cannot start: its working directory ${cwd} does not exist or is not a directory (the cwd option)`;
  }
  if (spawnError.code === 'ENOENT') {
    return `cannot start: there is no program ${command[0]} (give its full path, or install it)`;
  }
  if (spawnError.code === 'EACCES') return `cannot start: ${command[0]} is not executable (EACCES)`;
  return `cannot start: ${spawnError.message}`;
}

// Node's own hint after a warning or an uncaught error ("(Use `node --trace-warnings ...` to show where the warning
// was created)"): a command line for `node`, which a guest's author does not type (mt_eval.child_process drops it too).
const NODE_TRACE_HINT = /^\(Use `node --trace-[a-z-]+ \.\.\.` to show where the \w+ was \w+\)$/;

// The Node guest's report of a call it answered as failed, each line with the kit's name: its message (one line or
// more) and the stack frames indented under it. That call's own error says it, and it explains nothing that happens
// later (mt_eval.child_stderr drops it too).
const CALL_FAILED = /^mt-eval-guest: (translate|decide) failed: /;
const KIT_LINE = 'mt-eval-guest: ';
const KIT_FRAME = /^mt-eval-guest: \s/;

/** A guest's stderr lines without Node's hint of how to trace a warning, nor a report of a call answered failed. */
function withoutTraceHint(tail) {
  const lines = tail.split('\n');
  const kept = [];
  for (let index = 0; index < lines.length; index++) {
    if (CALL_FAILED.test(lines[index])) index = reportEnd(lines, index) - 1;
    else if (!NODE_TRACE_HINT.test(lines[index].trim())) kept.push(lines[index]);
  }
  return kept;
}

// Where the report of a failed call that begins at start ends: after the further lines of its message and the stack
// frames under them. A kit line after the frames is not part of it, and further lines without frames after them (a
// thrown string) are left in, as they cannot be told from the kit's other lines.
function reportEnd(lines, start) {
  let end = start + 1;
  for (let index = start + 1; index < lines.length && lines[index].startsWith(KIT_LINE); index++) {
    if (KIT_FRAME.test(lines[index])) end = index + 1;
    else if (end > start + 1) break; // (after its frames: another line of the kit's)
  }
  return end;
}

/** The last few stderr lines on one line, for a per-entry error. */
export function compactTail(tail, { lines = 5, chars = 1000 } = {}) {
  const last = withoutTraceHint(tail).filter((line) => line.trim()).slice(-lines).join(' / ');
  if (!last) return '';
  return ` | stderr: ${last.length > chars ? `...${lastUnits(last, chars)}` : last}`;
}

/** The last lines of a stderr tail, indented, for an error message. */
export function formatTail(tail, { lines = 20, chars = 4000 } = {}) {
  let text = withoutTraceHint(tail).join('\n').trimEnd();
  if (!text) return '';
  text = text.split('\n').slice(-lines).join('\n');
  if (text.length > chars) text = `...${lastUnits(text, chars)}`;
  return `\n  guest stderr (last lines):\n    ${text.split('\n').join('\n    ')}`;
}

/**
 * What an entry carries when its method failed (`message`, and the exception's `type` when it names one), whichever
 * host and runtime ran it: `the method failed: Error: boom`. A message that already says what the method did (`the
 * method called process.exit(3) …`) stands alone. A guest's message is capped, as one thrown in process is.
 * mt_eval.guarded_calls.method_failure says it in the same words.
 */
export function methodFailure(given, type) {
  const message = writable(given);
  if (message.startsWith('the method ')) return capped(message);
  const named = typeof type === 'string' && type !== '' && !message.startsWith(type);
  return capped(`the method failed: ${named ? `${type}: ` : ''}${message}`);
}

/**
 * What the items of an in-process call that threw carry: the words a guest's failure is given (`methodFailure`); a
 * process.exit() the call made (champollion's MethodExitError) in its own words, as the Python guest's sys.exit().
 */
export function callFailure(error) {
  if (error instanceof Error && error.name === 'MethodExitError') return capped(writable(error.message));
  return methodFailure(failureMessage(error), failureType(error));
}

/**
 * Whether a guest's error answering a translate or decide request concerns the config the request carries, which every
 * item shares, rather than one item: invalid params whose message starts "invalid config" (or "params.config", for one
 * left out), as both reference guests word it (bridge/PROTOCOL.md, Error codes; mt_eval.bridge.messages.about_config).
 */
/** Why a start timed out, in the Python host's words (mt_eval.bridge.start_failures). */
export const startTimedOut = (ms) => `did not answer initialize within ${ms / 1000} s (a guest answers initialize as soon as its method is loaded; see its stderr)`;

export const aboutConfig = (error) => error.code === ErrorCode.INVALID_PARAMS
  && (error.message.startsWith('invalid config') || error.message.startsWith('params.config'));

/** An entry sent alone (eachAlone) was refused for the config (aboutConfig), which every entry carries. */
export class ConfigRefused extends Error {}

/**
 * The results of items sent again alone, one at a time (send(item) resolves to its results), after the guest was
 * lost with them in flight. Once one is refused for its config (send throws ConfigRefused), the items left fail at once
 * with the same words (fail(id, message)), unsent, as a request refused for its config fails them all.
 */
export async function eachAlone(items, send, fail) {
  const results = [];
  for (const [sent, item] of items.entries()) {
    try {
      results.push(...await send(item));
    } catch (error) {
      if (!(error instanceof ConfigRefused)) throw error;
      return results.concat(items.slice(sent).map((left) => fail(left.id, error.message)));
    }
  }
  return results;
}

/** Why a whole request failed, as the error text of each of its entries. */
export function failureText(error) {
  if (!(error instanceof BridgeError)) return `the host failed: ${error?.message ?? error}`;
  if (error instanceof WithoutResults || error instanceof AnswerProblem) return error.message;
  switch (error.code) {
    case ErrorCode.GUEST_EXITED:
      return `${error.message}${compactTail(error.data?.stderr_tail ?? '')}`;
    case ErrorCode.TIMEOUT:
    case ErrorCode.MESSAGE_TOO_LARGE:
      return error.message;
    case ErrorCode.METHOD_FAILED:
      return methodFailure(error.message, error.data?.type);
    case ErrorCode.CANCELLED:
      return 'cancelled';
    default:
      return `the guest answered error ${error.code}: ${error.message}`;
  }
}
