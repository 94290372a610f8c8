// Champollion test projects: a config, .champollion/methods/ with copies of the test plugins, and
// locale files, in a fresh temporary directory.
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';

import { main } from '../../lib/champollion/cli.js';
import { repo } from './guests.js';

export const fixtures = join(repo, 'tests', 'fixtures');

/** Test plugins by the name they get under .champollion/methods. */
export const PLUGINS = {
  upper: join(fixtures, 'champollion-upper'), // translate.js only
  rot13: join(fixtures, 'champollion-rot13'), // pipeline.py only
  reverse: join(fixtures, 'reverse'), // both
  french: join(fixtures, 'champollion-french'), // translate.js only: a few sentences in French
};

/**
 * Write a project: config (an object, written as champollion.config.json), files (path → object or
 * text, relative to the project), plugins (names of PLUGINS to copy; by default upper, rot13 and reverse).
 * Returns {root, read, write, log, calls, cleanup}; log is a file the test plugins record their calls in
 * (CHAMPOLLION_FIXTURE_LOG).
 */
export function makeProject({ config, files = {}, plugins = ['upper', 'rot13', 'reverse'] }) {
  const root = mkdtempSync(join(tmpdir(), 'champollion-'));
  for (const name of plugins) cpSync(PLUGINS[name], join(root, '.champollion', 'methods', name), { recursive: true });
  const write = (path, value) => {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), typeof value === 'string' ? value : `${JSON.stringify(value, null, 2)}\n`);
  };
  write('champollion.config.json', config);
  for (const [path, value] of Object.entries(files)) write(path, value);
  const log = join(root, 'calls.jsonl');
  return {
    root,
    log,
    write,
    read: (path) => readFileSync(join(root, path), 'utf8'),
    json: (path) => JSON.parse(readFileSync(join(root, path), 'utf8')),
    /** The translate calls the test plugins recorded so far: [{method, target, sources}]. */
    calls: () => {
      try {
        return readFileSync(log, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line));
      } catch {
        return [];
      }
    },
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  };
}

/** An in-memory stream for the CLI's stdout and stderr. */
export function captureStream({ tty = false } = {}) {
  const chunks = [];
  return { isTTY: tty, write: (text) => { chunks.push(text); return true; }, text: () => chunks.join('') };
}

/** mt-eval-locales (its main, in this process) on a project: {status, stdout, stderr}, its path written <project>. */
export async function runLocales(project, ...argv) {
  const stdout = captureStream();
  const stderr = captureStream();
  const status = await main(['--config', project.root, '--quiet', ...argv], { stdout, stderr, env: process.env });
  const neutral = (text) => text.replaceAll(project.root, '<project>');
  return { status, stdout: neutral(stdout.text()), stderr: neutral(stderr.text()) };
}
