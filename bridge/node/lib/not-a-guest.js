// A plain text program started as a guest, told apart while it has not answered initialize, as the Python host
// tells it (sdk/mt_eval/bridge/not_a_guest.py), so that the start fails within a second or two, not at its timeout:
// - it answers with a line that is no JSON-RPC message but carries the request's own words (`protocol_versions`,
//   `initialize`, upper-cased or echoed around a translation): it took the request for text;
// - a process of its group sits single-threaded in read() on its stdin: it took the request as input and waits
//   for more (a filter that buffers its output, or answers only at the end of its input). Guests wait in
//   epoll/poll, or answer before they read again. Read from /proc (Linux); elsewhere nothing is known.
// (A program that sends the request back as it came, as cat does, is told apart by ./connection.js.)
import { readFileSync, readdirSync } from 'node:fs';
import { arch } from 'node:os';

const POLL_MS = 250;
const READING_FOR_MS = 1000; // blocked reading its stdin this long, with initialize unanswered: not a guest
// the read(2) system call's number, as /proc/PID/syscall shows it (Python's process_state.READ_SYSCALL)
const READ_SYSCALL = { x64: 0, arm64: 63, riscv64: 63, ia32: 3, arm: 3, ppc64: 3, s390x: 3 };

/** Whether a line that is no protocol message carries the initialize request's own words. */
export function echoesRequest(text) {
  const lower = text.toLowerCase();
  return lower.includes('protocol_versions') || (lower.includes('initialize') && lower.includes('jsonrpc'));
}

/** What a line of text that answered initialize is shown as (at most 100 characters). */
export function answeredWith(text) {
  const shown = text.trimEnd();
  const quoted = (shown.length > 100 ? `${shown.slice(0, 100)}…` : shown).replace(/[\\']/g, '\\$&');
  return `it answered the initialize request with a line of text ('${quoted}')`;
}

export const WAITS_FOR_INPUT = 'it read the initialize request and waits for more input without answering';

function read(path) {
  try {
    return readFileSync(path, 'latin1');
  } catch {
    return null; // (it ended meanwhile)
  }
}

// pid and what it started that is still in its process group.
function groupOf(pid) {
  const found = [];
  const pending = [pid];
  while (pending.length) {
    const member = pending.pop();
    const stat = read(`/proc/${member}/stat`);
    if (stat === null || Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]) !== pid) continue;
    found.push(member);
    let tasks = [];
    try {
      tasks = readdirSync(`/proc/${member}/task`);
    } catch { /* ended meanwhile */ }
    for (const task of tasks) {
      pending.push(...(read(`/proc/${member}/task/${task}/children`) ?? '').split(' ').filter(Boolean).map(Number));
    }
  }
  return found;
}

/** Whether a single-threaded process of the guest's group (pid leads it) is blocked in read() on its stdin. */
export function groupReadsStdin(pid) {
  const number = READ_SYSCALL[arch()];
  if (number === undefined || process.platform !== 'linux' || !pid) return false;
  return groupOf(pid).some((member) => {
    const threads = /^Threads:\s*(\d+)/m.exec(read(`/proc/${member}/status`) ?? '')?.[1];
    const fields = (read(`/proc/${member}/syscall`) ?? '').split(' ');
    return threads === '1' && fields[0] === String(number) && Number.parseInt(fields[1], 16) === 0;
  });
}

/** Watch the guest pid while initialize is unanswered: fail(WAITS_FOR_INPUT) once it has sat reading its stdin
 *  for a second. Returns the function that stops the watch. */
export function watchHandshake(pid, fail) {
  if (process.platform !== 'linux' || READ_SYSCALL[arch()] === undefined) return () => {};
  let since = null;
  const timer = setInterval(() => {
    if (!groupReadsStdin(pid)) {
      since = null;
    } else if ((since ??= performance.now()) + READING_FOR_MS <= performance.now()) {
      clearInterval(timer);
      fail(WAITS_FOR_INPUT);
    }
  }, POLL_MS);
  timer.unref?.();
  return () => clearInterval(timer);
}
