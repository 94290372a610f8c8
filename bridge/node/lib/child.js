// A guest process as the host sees it: spawned as the leader of its own process group, stdout
// split into protocol lines, stderr drained into a bounded tail, and its death detected once.
import { spawn } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';

import { LONGEST_DELAY } from './lazy-timer.js';
import { lastUnits } from './lone-surrogates.js';
import { LineSplitter } from './protocol.js';

export { LONGEST_DELAY };

/** The last lines of a stream, bounded in both lines and characters. */
export class StderrTail {
  constructor({ maxChars = 64 * 1024, maxLines = 50, maxLineChars = 8 * 1024, onLine = () => {} } = {}) {
    Object.assign(this, { maxChars, maxLines, maxLineChars, onLine });
    this.lines = [];
    this.chars = 0;
    this.partial = '';
  }

  push(text) {
    const parts = (this.partial + text).split('\n');
    this.partial = parts.pop();
    for (const line of parts) this.#add(line.endsWith('\r') ? line.slice(0, -1) : line);
    // A line that never ends is kept in pieces, so memory stays bounded.
    while (this.partial.length > this.maxLineChars) {
      const split = this.maxLineChars > 1 && (this.partial.charCodeAt(this.maxLineChars - 1) & 0xfc00) === 0xd800;
      const cut = this.maxLineChars - (split ? 1 : 0);
      this.#add(this.partial.slice(0, cut)); // (never between the two halves of a pair)
      this.partial = this.partial.slice(cut);
    }
  }

  end() {
    if (this.partial) this.#add(this.partial);
    this.partial = '';
  }

  text() {
    const all = this.partial ? [...this.lines, this.partial].join('\n') : this.lines.join('\n');
    return lastUnits(all, this.maxChars);
  }

  #add(line) {
    this.onLine(line);
    this.lines.push(line);
    this.chars += line.length + 1;
    while (this.lines.length > this.maxLines || (this.chars > this.maxChars && this.lines.length > 1)) {
      this.chars -= this.lines.shift().length + 1;
    }
  }
}

/**
 * Does process group `pgid` still have a running member? Zombies do not count: an exited
 * grandchild waits for a reaper that may never come (some container inits do not reap).
 */
export function groupHasLiveMembers(pgid) {
  if (!pgid) return false;
  try {
    process.kill(-pgid, 0);
  } catch (error) {
    return error.code === 'EPERM';
  }
  if (process.platform !== 'linux') return true;
  try {
    for (const name of readdirSync('/proc')) {
      if (name.charCodeAt(0) < 48 || name.charCodeAt(0) > 57) continue;
      let stat;
      try {
        stat = readFileSync(`/proc/${name}/stat`, 'latin1');
      } catch {
        continue; // exited meanwhile
      }
      // Fields after "(comm)": state, ppid, pgrp, ...
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) === pgid && fields[0] !== 'Z' && fields[0] !== 'X') return true;
    }
    return false;
  } catch {
    return true;
  }
}

const sleep = (ms) => new Promise((resolve) => { setTimeout(resolve, ms); });


// Process groups still running, killed when this process ends without closing its guests: it exits (process.exit,
// or nothing is left to do), an exception nothing catches ends it, or a signal nothing else listens for does
// (SIGINT, SIGTERM, SIGHUP: each then ends it as it would have). A program that listens for a signal itself
// decides what it does, and closes its guests (mt-eval-locales stops as on Ctrl-C).
const liveGroups = new Set();
const ENDING_SIGNALS = process.platform === 'win32' ? [] : ['SIGINT', 'SIGTERM', 'SIGHUP'];
let hooksInstalled = false;

/** SIGKILL to the process group of every guest still running; synchronous, so it can run as the process ends. */
function killLiveGroups() {
  for (const group of liveGroups) {
    try { process.kill(-group, 'SIGKILL'); } catch { /* already gone */ }
  }
  liveGroups.clear();
}

function installHooks() {
  hooksInstalled = true;
  process.on('exit', killLiveGroups); // (an uncaught exception or rejection emits it too)
  for (const signal of ENDING_SIGNALS) {
    const onSignal = () => {
      if (process.listenerCount(signal) > 1) return; // the program handles it
      killLiveGroups();
      process.removeListener(signal, onSignal);
      process.kill(process.pid, signal); // ended by the signal, as without this listener
    };
    process.on(signal, onSignal);
  }
}

function track(pgid) {
  if (!hooksInstalled) installHooks();
  liveGroups.add(pgid);
}

// How long to wait, after the guest exits or closes stdout, for the rest of its output.
const DEATH_GRACE_MS = 200;

export class GuestProcess {
  /**
   * @param {string[]} command argv of the guest
   * @param {object} options cwd, env, maxLineBytes, and callbacks: onLine(Buffer),
   *   onOverflow({id, bytes}), onStderrLine(string), onDeath({code, signal, error, stdoutClosedFirst})
   */
  constructor(command, { cwd, env, maxLineBytes, onLine, onOverflow, onStderrLine, onDeath }) {
    this.command = command;
    this.onDeath = onDeath;
    this.exitInfo = null; // {code, signal} once the leader exited
    this.dead = null; // what onDeath received, once it was called
    this.stderr = new StderrTail({ onLine: onStderrLine });
    this.splitter = new LineSplitter({ maxLineBytes, onLine, onOverflow });
    this.closed = { stdout: false, stderr: false };
    this.exited = new Promise((resolve) => { this.resolveExited = resolve; });

    const child = spawn(command[0], command.slice(1), {
      cwd, env, detached: true, stdio: ['pipe', 'pipe', 'pipe'], windowsHide: true,
    });
    this.child = child;
    this.pid = child.pid;
    if (this.pid) track(this.pid);
    child.on('error', (error) => {
      // A failed spawn (ENOENT, EACCES) has no pid and emits no 'exit'.
      if (this.pid) return;
      this.spawnError = error;
      this.#exit(null, null);
    });
    child.on('exit', (code, signal) => this.#exit(code, signal));
    child.stdin.on('error', () => {}); // EPIPE after the guest died: its death is reported instead
    child.stdout.on('data', (chunk) => this.splitter.push(chunk));
    child.stdout.on('close', () => {
      this.splitter.end();
      this.#closed('stdout');
    });
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (text) => this.stderr.push(text));
    child.stderr.on('close', () => {
      this.stderr.end();
      this.#closed('stderr');
    });
  }

  get alive() {
    return this.dead === null;
  }

  /** Keep this process running for the guest (true: a request is in flight, or it is closing), or not (idle). */
  hold(on) {
    if (this.held === on) return;
    this.held = on;
    const method = on ? 'ref' : 'unref';
    this.child[method]();
    for (const stream of [this.child.stdin, this.child.stdout, this.child.stderr]) stream?.[method]?.();
  }

  stderrTail() {
    return this.stderr.text();
  }

  /** Write one line to the guest's stdin; false when it can no longer be written. */
  write(line) {
    const stdin = this.child.stdin;
    if (this.dead || !stdin.writable) return false;
    stdin.write(line);
    return true;
  }

  endInput() {
    if (this.child.stdin.writable) this.child.stdin.end();
  }

  /** Send a signal to the guest's whole process group; false if there was nobody to signal. */
  signalGroup(signal) {
    if (!this.pid) return false;
    try {
      process.kill(-this.pid, signal);
      return true;
    } catch {
      return false;
    }
  }

  /** Resolves true if the leader exits within ms. */
  waitExit(ms) {
    if (this.exitInfo) return Promise.resolve(true);
    let timer;
    return Promise.race([
      this.exited.then(() => true),
      new Promise((resolve) => { timer = setTimeout(() => resolve(false), Math.min(ms, LONGEST_DELAY)); }),
    ]).finally(() => clearTimeout(timer));
  }

  /**
   * Stop everything in the group: SIGTERM, then SIGKILL if anything is still running after stepMs.
   * Never waits much more than three steps, whatever the group does.
   */
  async terminate(stepMs) {
    const gone = () => this.exitInfo !== null && !groupHasLiveMembers(this.pid);
    for (const signal of ['SIGTERM', 'SIGKILL']) {
      if (gone()) break;
      this.signalGroup(signal);
      const deadline = Date.now() + stepMs;
      while (!gone() && Date.now() < deadline) {
        await (this.exitInfo ? sleep(50) : this.waitExit(Math.min(50, deadline - Date.now())));
      }
    }
    if (!this.exitInfo) await this.waitExit(stepMs);
    if (this.pid && !groupHasLiveMembers(this.pid)) liveGroups.delete(this.pid);
  }

  #exit(code, signal) {
    if (this.exitInfo) return;
    this.exitInfo = { code, signal };
    this.resolveExited(this.exitInfo);
    this.#maybeDead();
  }

  #closed(stream) {
    this.closed[stream] = true;
    this.#maybeDead();
  }

  // Dead once the guest exited or closed stdout; output still in the pipes gets a short grace.
  #maybeDead() {
    if (this.dead) return;
    const everything = this.exitInfo && this.closed.stdout && this.closed.stderr;
    if (everything || (this.spawnError && this.exitInfo)) {
      this.#die();
    } else if ((this.exitInfo || this.closed.stdout) && !this.graceTimer) {
      this.graceTimer = setTimeout(() => this.#die(), DEATH_GRACE_MS);
    }
  }

  #die() {
    if (this.dead) return;
    clearTimeout(this.graceTimer);
    this.stderr.end();
    this.dead = {
      code: this.exitInfo?.code ?? null,
      signal: this.exitInfo?.signal ?? null,
      error: this.spawnError ?? null,
      running: this.exitInfo === null,
    };
    if (this.exitInfo && !groupHasLiveMembers(this.pid)) liveGroups.delete(this.pid);
    this.onDeath?.(this.dead);
  }
}
