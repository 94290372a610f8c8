// A guest on this process's stdin and stdout: stdout is diverted so that only protocol lines reach it (console
// output and stray writes go to stderr), the lines of one turn of the event loop are written together, after
// which stdin is polled for a moment if nothing is left in flight (input-poll.js), and the process exits once
// stdin has closed and every request is answered.
import { exitThrows } from './champollion/method-guard.js';
import { DEFAULT_MAX_LINE_BYTES } from './protocol.js';
import { GuestServer } from './guest.js';
import { thrownText } from './guest-requests.js';
import { settleMilliseconds } from './guest-slots.js';
import { inputPoller, pollNanoseconds } from './input-poll.js';
import { loadMethod } from './method-load.js';

/**
 * Send console output and stray process.stdout writes to stderr, so stdout carries protocol lines
 * only. Returns a writer for the real stdout.
 */
export function divertStdout() {
  const stdout = process.stdout;
  const protocolWrite = stdout.write.bind(stdout);
  const stderrWrite = process.stderr.write.bind(process.stderr);
  stdout.write = (chunk, encoding, callback) => stderrWrite(chunk, encoding, callback);
  const toStderr = new console.Console({ stdout: process.stderr, stderr: process.stderr });
  for (const key of Object.keys(console)) {
    if (key !== 'Console' && typeof toStderr[key] === 'function') console[key] = toStderr[key];
  }
  return protocolWrite;
}

/**
 * A line writer that gathers the lines produced in one turn of the event loop into a single
 * write (one system call instead of one per response). A write with a callback flushes at once.
 * `afterWrite` runs after each write of gathered lines.
 */
function coalesce(writeOut, afterWrite = () => {}) {
  let lines = [];
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    if (lines.length === 0) return;
    const data = lines.length === 1 ? lines[0] : lines.join('');
    lines = [];
    writeOut(data);
    afterWrite();
  };
  return (line, callback) => {
    if (line) lines.push(line);
    if (callback) {
      flush();
      writeOut('', callback);
    } else if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  };
}

// How long an exiting guest waits for what is still queued for its stderr to be written.
const STDERR_FLUSH_MS = 1000;

/**
 * Call `then` once everything written to stderr so far has been handed to the pipe, or after STDERR_FLUSH_MS. Node
 * writes to a pipe without blocking and process.exit() drops what is still queued, so without this an exiting guest
 * would lose the end of what its method wrote (megabytes in one call: most of it), and its own last words; the wait is
 * bounded, as a host that stopped reading stderr must not keep it from exiting.
 */
function afterStderrFlushed(then) {
  if (process.stderr.writableLength === 0) {
    then();
    return;
  }
  let called = false;
  const once = () => {
    if (called) return;
    called = true;
    then();
  };
  process.stderr.write('', once);
  setTimeout(once, STDERR_FLUSH_MS).unref();
}

/**
 * Serve a method on process stdin/stdout until stdin closes, then exit. `resolved` is what resolveMethod (or
 * moduleTarget) returns: the module, its name, method id and what it implements.
 */
export function serveResolved(resolved, { maxLineBytes = DEFAULT_MAX_LINE_BYTES } = {}) {
  // Every line of the guest's own messages (a stack too) starts with its name: a host tells them apart from what
  // the method itself writes to stderr, which it shows as the method's output.
  const log = (text) => process.stderr.write(`${String(text).replace(/^/gm, 'mt-eval-guest: ')}\n`);
  // The method's process.exit() throws, failing the call it was made in (as the Python guest fails a sys.exit()), and
  // the guest serves on; the guest's own exits are the real one.
  const exit = exitThrows();
  let poller;
  let settleMs;
  try {
    poller = inputPoller(0, pollNanoseconds());
    settleMs = settleMilliseconds();
  } catch (error) {
    log(error.message);
    exit(2);
  }
  let inputEnded = false;
  const pollInput = () => { // the next request of a caller waiting on this answer, read as it arrives
    if (inputEnded || server.unanswered > 0) return;
    const chunk = poller.poll();
    if (chunk !== null) server.push(chunk);
  };
  const write = coalesce(divertStdout(), poller ? pollInput : undefined);
  const server = new GuestServer({
    load: () => loading,
    write,
    log,
    maxLineBytes,
    settleMs,
    exit: (code) => write('', () => afterStderrFlushed(() => exit(code))),
  });
  process.stdin.on('data', (chunk) => server.push(chunk));
  process.stdin.on('end', () => { inputEnded = true; server.end(); });
  process.stdin.on('error', () => { inputEnded = true; server.end(); });
  // Answers that cannot be written: the reader gone (`| head`, a host that closed its end) ends the guest quietly with
  // 141, as `mt-eval serve` does; any other failure (a full disk) is said once, and the guest stops with 1 — in either
  // case once what is queued for stderr (the method's output, that line) is written, as at every exit.
  let stopping = false;
  process.stdout.on('error', (error) => {
    if (stopping) return;
    stopping = true;
    if (error.code !== 'EPIPE') log(`cannot write the answers: ${error.message}; stopping`);
    afterStderrFlushed(() => exit(error.code === 'EPIPE' ? 141 : 1));
  });
  // What a method throws from a timer or leaves rejected fails nothing in flight: it is logged and the guest serves on,
  // as the Python guest's event loop logs an exception in a callback (an uncaught one would end the process, and with
  // it every call in flight). No call's error says it, so it is written as the method's own output, which hosts show.
  const methodSays = (text) => process.stderr.write(`${text}\n`);
  process.on('unhandledRejection', (reason) => methodSays(`unhandled rejection in the method: ${thrownText(reason)}`));
  process.on('uncaughtException', (error) => methodSays(`uncaught exception in the method: ${thrownText(error)}`));
  // Node would end quietly once stdin has closed and nothing is left to run, leaving requests unanswered.
  process.on('beforeExit', () => server.abandon());
  // Import while the host's initialize is on its way; a failure is reported when it arrives.
  const loading = loadMethod(resolved);
  loading.catch(() => {});
  return server;
}
