// Shared test helpers: where things are, the guest commands, and whether a process still runs.
import { spawnSync } from 'node:child_process';
import { accessSync, constants, readFileSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
export const repo = join(here, '..', '..', '..', '..');
export const nodePackage = join(repo, 'bridge', 'node');
export const reverseFixture = join(repo, 'tests', 'fixtures', 'reverse');
export const conformanceDir = join(repo, 'bridge', 'vectors', 'conformance');
export const testGuest = (name) => join(nodePackage, 'test', 'guests', name);

export const nodeGuestCommand = [process.execPath, join(nodePackage, 'bin', 'mt-eval-guest.js'), reverseFixture];

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
