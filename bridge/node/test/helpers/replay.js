// Replays a conformance transcript (bridge/vectors/conformance/*.json) against a guest command,
// following the matching rules in bridge/PROTOCOL.md "Conformance". Throws an Error naming the
// step and the mismatch; always leaves the guest process stopped.
import { spawn } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const TYPE_PATTERNS = {
  $any: () => true,
  $string: (v) => typeof v === 'string',
  $integer: (v) => Number.isInteger(v),
  $number: (v) => typeof v === 'number',
  $object: (v) => v !== null && typeof v === 'object' && !Array.isArray(v),
  $array: (v) => Array.isArray(v),
  $null_or_string: (v) => v === null || typeof v === 'string',
};

/** Why value does not match pattern (a string naming the path), or null when it matches. */
export function mismatch(pattern, value, path = '$') {
  if (typeof pattern === 'string' && Object.hasOwn(TYPE_PATTERNS, pattern)) {
    return TYPE_PATTERNS[pattern](value) ? null : `${path}: expected ${pattern}, got ${JSON.stringify(value)}`;
  }
  if (Array.isArray(pattern)) {
    if (!Array.isArray(value)) return `${path}: expected a list, got ${JSON.stringify(value)}`;
    if (value.length !== pattern.length) return `${path}: expected ${pattern.length} items, got ${value.length}`;
    for (let i = 0; i < pattern.length; i++) {
      const found = mismatch(pattern[i], value[i], `${path}[${i}]`);
      if (found) return found;
    }
    return null;
  }
  if (pattern !== null && typeof pattern === 'object') {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      return `${path}: expected an object, got ${JSON.stringify(value)}`;
    }
    for (const [key, sub] of Object.entries(pattern)) {
      if (!Object.hasOwn(value, key)) return `${path}.${key}: missing`;
      const found = mismatch(sub, value[key], `${path}.${key}`);
      if (found) return found;
    }
    return null;
  }
  return Object.is(pattern, value) || pattern === value ? null
    : `${path}: expected ${JSON.stringify(pattern)}, got ${JSON.stringify(value)}`;
}

// Can each line be given its own pattern? (backtracking; transcripts have few lines)
function assignUnordered(patterns, messages) {
  const used = new Array(messages.length).fill(false);
  const place = (i) => {
    if (i === patterns.length) return true;
    for (let j = 0; j < messages.length; j++) {
      if (!used[j] && mismatch(patterns[i], messages[j]) === null) {
        used[j] = true;
        if (place(i + 1)) return true;
        used[j] = false;
      }
    }
    return false;
  };
  return place(0);
}

/** Every transcript in a directory, sorted by file name. */
export function loadTranscripts(directory) {
  return readdirSync(directory).filter((name) => name.endsWith('.json')).sort()
    .map((name) => JSON.parse(readFileSync(join(directory, name), 'utf8')));
}

/**
 * The requests a transcript can be run with: those its "by_request" steps name, first named first (none: it
 * runs one way only).
 */
export function requestsOf(transcript) {
  return [...new Set(transcript.steps.flatMap((step) => Object.keys(step.by_request ?? {})))];
}

/** The step as run with `request`: a "by_request" step's own step for it (undefined: the run leaves it out). */
export function stepFor(step, request) {
  return 'by_request' in step ? step.by_request[request] : step;
}

const implementedBy = (result) => (Array.isArray(result?.implements) ? result.implements : ['translate']);

/**
 * Why a transcript (run with `request`, for one with "by_request" steps) does not apply to a guest whose
 * initialize result is `result` (null when it does): "requires" names a request (or a list of them) the guest
 * must implement, "unless" one it must not, "requires_capability" a capability it must declare true
 * (bridge/PROTOCOL.md).
 */
export function notApplicable(transcript, result, request = null) {
  const implemented = implementedBy(result);
  const wanted = transcript.requires_capability;
  if (wanted && result?.capabilities?.[wanted] !== true) return `the guest does not declare capabilities.${wanted}`;
  for (const name of [transcript.requires ?? []].flat()) {
    if (!implemented.includes(name)) return `the guest does not implement ${name}`;
  }
  if (transcript.unless && implemented.includes(transcript.unless)) return `the guest implements ${transcript.unless}`;
  if (request !== null && !implemented.includes(request)) return `the guest does not implement ${request}`;
  const runsWith = requestsOf(transcript);
  if (runsWith.length && !runsWith.some((name) => implemented.includes(name))) {
    return `the guest implements none of ${runsWith.join(', ')}`;
  }
  return null;
}

/** The requests a transcript with "by_request" steps is run with against this guest: each it implements. */
export function requestsToRun(transcript, result) {
  return requestsOf(transcript).filter((name) => implementedBy(result).includes(name));
}

/**
 * Run one transcript against `command` (argv); one with "by_request" steps with `request`, or (null) with
 * the first of its requests the guest implements. Resolves when every step passed to {skipped: null,
 * request, moreRequests: the other requests the guest implements, to run it with too} (to {skipped: reason}
 * when the guest's handshake shows the transcript does not apply to it); rejects with an Error naming the
 * transcript (and request), the step and what differed (with the guest's stderr).
 */
export async function replay(command, transcript, { cwd, env, stepTimeoutMs = 10_000, request = null } = {}) {
  const child = spawn(command[0], command.slice(1), { cwd, env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
  let stderr = '';
  let buffered = '';
  const lines = [];
  let wake = null;
  let exit = null;
  const exited = new Promise((resolve) => {
    child.on('exit', (code, signal) => { exit = { code, signal }; resolve(exit); wake?.(); });
    child.on('error', (error) => { exit = { code: null, signal: null, error }; resolve(exit); wake?.(); });
  });
  child.stdin.on('error', () => {});
  child.stderr.setEncoding('utf8');
  child.stderr.on('data', (text) => { stderr = (stderr + text).slice(-8000); });
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (text) => {
    const parts = (buffered + text).split('\n');
    buffered = parts.pop();
    lines.push(...parts.map((line) => line.replace(/\r$/, '')));
    wake?.();
  });
  child.stdout.on('end', () => wake?.());

  const deadline = () => Date.now() + stepTimeoutMs;
  // The next protocol line as an object, skipping log and progress notifications.
  async function next(until) {
    for (;;) {
      while (lines.length) {
        const line = lines.shift();
        let message;
        try {
          message = JSON.parse(line);
        } catch {
          throw new Error(`stdout line is not JSON: ${JSON.stringify(line.slice(0, 200))}`);
        }
        const isNote = message && !('id' in message) && (message.method === 'log' || message.method === 'progress');
        if (!isNote) return message;
      }
      if (exit && child.stdout.readableEnded) throw new Error(`the guest exited (${JSON.stringify(exit)}) before the expected line`);
      const left = until - Date.now();
      if (left <= 0) throw new Error(`no line within ${stepTimeoutMs} ms`);
      await new Promise((resolve) => {
        const timer = setTimeout(resolve, left);
        wake = () => { clearTimeout(timer); wake = null; resolve(); };
      });
    }
  }

  let runWith = request;
  let moreRequests = [];
  try {
    for (const [index, written] of transcript.steps.entries()) {
      const step = stepFor(written, runWith ?? requestsOf(transcript)[0]);
      if (step === undefined) continue; // a step of the transcript as run with another request
      const name = runWith ? `${transcript.name} (${runWith})` : transcript.name;
      const where = `${name} step ${index} (${Object.keys(step)[0]})`;
      try {
        if ('send' in step) child.stdin.write(`${JSON.stringify(step.send)}\n`);
        else if ('send_raw' in step) child.stdin.write(step.send_raw);
        else if ('close_stdin' in step) child.stdin.end();
        else if ('expect' in step) {
          const message = await next(deadline());
          if (message?.result?.protocol_version !== undefined) {
            const skipped = notApplicable(transcript, message.result, request);
            if (skipped) return { skipped };
            const runs = requestsToRun(transcript, message.result);
            if (runWith === null && runs.length) [runWith, ...moreRequests] = runs;
          }
          const found = mismatch(step.expect, message);
          if (found) throw new Error(`${found}\n  line: ${JSON.stringify(message)}`);
        } else if ('expect_unordered' in step) {
          const until = deadline();
          const messages = [];
          for (let i = 0; i < step.expect_unordered.length; i++) messages.push(await next(until));
          if (!assignUnordered(step.expect_unordered, messages)) {
            throw new Error(`the lines do not match the patterns in any order:\n  ${messages.map((m) => JSON.stringify(m)).join('\n  ')}`);
          }
        } else if ('expect_exit' in step) {
          let timer;
          const result = await Promise.race([exited,
            new Promise((resolve) => { timer = setTimeout(() => resolve(null), stepTimeoutMs); })]);
          clearTimeout(timer);
          if (result === null) throw new Error(`the guest did not exit within ${stepTimeoutMs} ms`);
          if (result.code !== step.expect_exit) throw new Error(`expected exit ${step.expect_exit}, got ${JSON.stringify(result)}`);
        } else {
          throw new Error(`unknown step ${JSON.stringify(step)}`);
        }
      } catch (error) {
        throw new Error(`${where}: ${error.message}\n  guest stderr: ${stderr.trim().slice(-2000) || '(empty)'}`);
      }
    }
    return { skipped: null, request: runWith, moreRequests };
  } finally {
    if (!exit && child.pid) {
      try { process.kill(-child.pid, 'SIGKILL'); } catch { /* gone */ }
      await exited;
    }
  }
}
