// Shared test helpers: where things are, the guest commands, and whether a process still runs.
import { spawn, spawnSync } from 'node:child_process';
import { accessSync, constants, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join } from 'node:path';
import { after } from 'node:test';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
export const repo = join(here, '..', '..', '..', '..');
export const nodePackage = join(repo, 'bridge', 'node');
export const reverseFixture = join(repo, 'tests', 'fixtures', 'reverse');
export const conformanceDir = join(repo, 'bridge', 'vectors', 'conformance');
export const testGuest = (name) => join(nodePackage, 'test', 'guests', name);

export const guestBin = join(nodePackage, 'bin', 'mt-eval-guest.js');
export const nodeGuestCommand = [process.execPath, guestBin, reverseFixture];

/**
 * For a test file of mt-eval-guest on module files: moduleFile(name, source) writes one in a scratch directory,
 * started(command) and guest(args) start a LineDriver (guest: mt-eval-guest with these arguments); every driver
 * started is killed once the file's tests are done.
 */
export function guestKit() {
  const scratch = mkdtempSync(join(tmpdir(), 'mt-eval-guest-test-'));
  const drivers = [];
  after(() => drivers.forEach((driver) => driver.kill()));
  const started = (command, options) => {
    const driver = new LineDriver(command, options);
    drivers.push(driver);
    return driver;
  };
  return {
    scratch,
    moduleFile(name, source) {
      const file = join(scratch, name);
      writeFileSync(file, source);
      return file;
    },
    started,
    guest: (args, options) => started([process.execPath, guestBin, ...args], options),
  };
}

function executable(path) {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

let python;
/**
 * The Python guest command for the reverse fixture: `mt-eval serve` from $MT_EVAL (a path), PATH,
 * or the repository's .venv. {command} when it works, {skip: reason} when it does not.
 */
export function pythonGuest() {
  if (python) return python;
  const candidates = process.env.MT_EVAL ? [process.env.MT_EVAL]
    : [...(process.env.PATH ?? '').split(delimiter).filter(Boolean).map((dir) => join(dir, 'mt-eval')),
      join(repo, '.venv', 'bin', 'mt-eval')];
  const found = candidates.find(executable);
  if (!found) {
    python = { skip: process.env.MT_EVAL ? `MT_EVAL=${process.env.MT_EVAL} is not an executable`
      : 'mt-eval not found (set MT_EVAL to its path, or put it on PATH)' };
    return python;
  }
  const help = spawnSync(found, ['serve', '--help'], { encoding: 'utf8', timeout: 30_000 });
  python = help.status === 0 ? { command: [found, 'serve', reverseFixture] }
    : { skip: `${found} does not support \`serve\` yet (exit ${help.status}): ${(help.stderr || '').trim().split('\n').pop()}` };
  return python;
}

/** Is pid a running process? A zombie (exited, not yet reaped) counts as gone. */
export function isRunning(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'latin1');
    const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
    return state !== 'Z' && state !== 'X';
  } catch {
    return false;
  }
}

/** The pids of the live processes whose environment holds marker (MT_EVAL_TEST_MARKER, as tests/process_support.py). */
export function processesMarked(marker) {
  const found = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/environ`).includes(marker) && isRunning(name)) found.push(Number(name));
    } catch {
      // exited meanwhile, or not ours to read
    }
  }
  return found;
}

export const CONFIG = Object.freeze({ source_lang: 'eng', target_lang: 'spa' });

/** A logger that records every message, for assertions. */
export function recordingLogger() {
  const records = [];
  const logger = {};
  for (const level of ['debug', 'info', 'warn', 'error']) logger[level] = (message) => records.push({ level, message });
  return { logger, records, text: () => records.map((r) => `${r.level}: ${r.message}`).join('\n') };
}

/** Wait until predicate() is true or ms pass; returns its last value. */
export async function waitFor(predicate, ms = 5000) {
  const deadline = Date.now() + ms;
  while (!predicate() && Date.now() < deadline) await new Promise((resolve) => { setTimeout(resolve, 20); });
  return predicate();
}

/**
 * Drives a guest process line by line: send objects or raw bytes, read the next protocol message,
 * wait for its exit. Used where a conformance transcript cannot say enough.
 */
export class LineDriver {
  constructor(command, { cwd = repo, env } = {}) {
    this.child = spawn(command[0], command.slice(1), { cwd, env, stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    this.stdout = '';
    this.stderr = '';
    this.lines = [];
    this.waiters = [];
    this.exited = new Promise((resolve) => this.child.on('exit', (code, signal) => resolve({ code, signal })));
    this.child.stdin.on('error', () => {});
    this.child.stderr.setEncoding('utf8');
    this.child.stderr.on('data', (text) => { this.stderr += text; });
    this.child.stdout.setEncoding('utf8');
    this.child.stdout.on('data', (text) => {
      const parts = (this.stdout + text).split('\n');
      this.stdout = parts.pop();
      this.lines.push(...parts);
      this.waiters.splice(0).forEach((wake) => wake());
    });
  }

  send(message) {
    this.child.stdin.write(`${JSON.stringify(message)}\n`);
  }

  sendRaw(data) {
    this.child.stdin.write(data);
  }

  initialize(config = CONFIG) {
    this.send({ jsonrpc: '2.0', id: 'init', method: 'initialize',
      params: { protocol_versions: ['mt-eval-bridge/1'], host: { name: 'test', version: '1' }, config } });
    return this.next();
  }

  translate(id, entries, config) {
    this.send({ jsonrpc: '2.0', id, method: 'translate', params: config === undefined ? { entries } : { entries, config } });
  }

  /** The next stdout line, parsed (every stdout line must be JSON). */
  async next(ms = 10_000) {
    const deadline = Date.now() + ms;
    while (this.lines.length === 0) {
      if (Date.now() >= deadline) throw new Error(`no stdout line within ${ms} ms; stderr: ${this.stderr.slice(-2000)}`);
      await new Promise((resolve) => {
        const timer = setTimeout(resolve, Math.max(0, deadline - Date.now()));
        this.waiters.push(() => { clearTimeout(timer); resolve(); });
      });
    }
    return JSON.parse(this.lines.shift());
  }

  /** The next n messages, keyed by their id. */
  async collect(n, ms) {
    const byId = new Map();
    for (let i = 0; i < n; i++) {
      const message = await this.next(ms);
      byId.set(message.id, message);
    }
    return byId;
  }

  async close() {
    this.child.stdin.end();
    let timer;
    const result = await Promise.race([this.exited,
      new Promise((resolve) => { timer = setTimeout(() => resolve(null), 10_000); })]);
    clearTimeout(timer);
    if (result === null) this.kill();
    return result;
  }

  kill() {
    try { process.kill(-this.child.pid, 'SIGKILL'); } catch { /* gone */ }
  }
}
