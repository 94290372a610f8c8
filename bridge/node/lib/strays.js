// Processes a guest started outside its own process group — setsid: Node's `detached: true`, Python's
// start_new_session — which a signal to the guest's group does not reach. They are read from /proc (Linux; elsewhere
// none are known) before the guest is stopped, while they are still its descendants, and ended after it by pid, each
// checked to be the same process (its start time) before it is signalled.
import { readFileSync, readdirSync } from 'node:fs';

const sleep = (ms) => new Promise((resolve) => { setTimeout(resolve, ms); });

// The fields of /proc/PID/stat after "(comm) ": state, ppid, pgrp, …, starttime (index 19); null when it has ended.
function statFields(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return fields[0] === 'Z' || fields[0] === 'X' ? null : fields;
  } catch {
    return null;
  }
}

function children(pid) {
  const found = [];
  let tasks;
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return found;
  }
  for (const task of tasks) {
    try {
      found.push(...readFileSync(`/proc/${pid}/task/${task}/children`, 'latin1').split(' ').filter(Boolean).map(Number));
    } catch {
      // (the thread ended meanwhile)
    }
  }
  return found;
}

/** [{pid, started}] of what `pid` started, at any depth, that runs outside its process group. */
export function outsideGroup(pid) {
  if (!pid || process.platform !== 'linux') return [];
  const found = [];
  const pending = [pid];
  while (pending.length) {
    for (const child of children(pending.pop())) {
      const fields = statFields(child);
      if (!fields) continue;
      pending.push(child);
      if (Number(fields[2]) !== pid) found.push({ pid: child, started: fields[19] });
    }
  }
  return found;
}

const same = ({ pid, started }) => statFields(pid)?.[19] === started;

function command(pid) {
  try {
    const text = readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0').join(' ').trim();
    return text.length > 80 ? `${text.slice(0, 79)}…` : text; // (shortened, and said to be)
  } catch {
    return '?';
  }
}

/**
 * End the strays (outsideGroup's, read before the guest was stopped) still running: SIGTERM, then SIGKILL after
 * stepMs; warn(text) names them.
 */
export async function endStrays(strays, stepMs, warn) {
  const left = strays.filter(same);
  if (!left.length) return;
  const names = left.map(({ pid }) => `pid ${pid}: ${command(pid)}`).join(', ');
  warn(`the guest left ${left.length} process${left.length === 1 ? '' : 'es'} running outside its process group `
    + `(${names}): ended (a method stops what it starts when it is closed)`);
  for (const signal of ['SIGTERM', 'SIGKILL']) {
    for (const stray of left) {
      if (same(stray)) {
        try { process.kill(stray.pid, signal); } catch { /* ended meanwhile */ }
      }
    }
    const deadline = Date.now() + stepMs;
    while (Date.now() < deadline && left.some(same)) await sleep(20);
  }
}
