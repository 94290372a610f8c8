// What a command leaves running when it is done (the Node twin of mt_eval.cli.leftovers): a child process that a
// translate.js run in this process started and never stopped would live on with no parent once the command
// exits. So each one still running, and every process it started, is ended (SIGTERM, then SIGKILL after graceMs),
// and the children are named in one warning line.
// Linux only (it reads /proc); elsewhere nothing is found.
import { readdirSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

/** This process's running child processes (not zombies): [{ pid, command }]. */
export function runningChildren() {
  const found = [];
  for (const child of children('self')) {
    const stat = running(child);
    if (stat === null) continue;
    let command = '';
    try {
      command = readFileSync(`/proc/${child}/cmdline`).toString().replaceAll('\0', ' ').trim();
    } catch {
      continue;
    }
    found.push({ pid: child, command: command.slice(0, 80) || stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')) });
  }
  return found;
}

/** The processes pid started, and those they started, that still run (parents before children). */
function descendants(pid) {
  const found = [];
  const pending = [pid];
  while (pending.length) {
    const next = children(pending.pop()).filter((child) => running(child) !== null);
    found.push(...next);
    pending.push(...next);
  }
  return found;
}

function children(pid) {
  let tasks;
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return [];
  }
  const pids = new Set();
  for (const task of tasks) {
    try {
      for (const word of readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').split(/\s+/)) {
        if (word) pids.add(Number(word));
      }
    } catch {
      // (the thread ended meanwhile)
    }
  }
  return [...pids].sort((a, b) => a - b);
}

/** The /proc stat line of pid while it runs; null once it ended (or is a zombie). */
function running(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const state = stat[stat.lastIndexOf(')') + 2];
    return state === 'Z' || state === 'X' ? null : stat;
  } catch {
    return null;
  }
}

/** End the child processes still running, saying so on stderr as `${prog}: warning: …`. */
export async function endLeftovers(prog, { stderr = process.stderr, graceMs = 5000 } = {}) {
  const left = runningChildren();
  if (!left.length) return;
  const one = left.length === 1;
  stderr.write(`${prog}: warning: ${left.length} ${one ? 'process' : 'processes'} started in this command `
    + `${one ? 'was' : 'were'} still running at its end (${left.map((p) => `pid ${p.pid}: ${p.command}`).join(', ')}); `
    + `ended ${one ? 'it' : 'them'} (a method stops what it starts in close())\n`);
  const signal = (pid, name) => {
    try {
      process.kill(pid, name);
    } catch {
      // (it ended meanwhile)
    }
  };
  const tree = left.flatMap(({ pid }) => [pid, ...descendants(pid)]); // (read before any parent ends)
  for (const pid of tree) signal(pid, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  let waiting = tree;
  while (waiting.length && Date.now() < deadline) {
    await sleep(20);
    waiting = waiting.filter((pid) => running(pid) !== null);
  }
  for (const pid of waiting) signal(pid, 'SIGKILL');
}
