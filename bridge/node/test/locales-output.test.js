// mt-eval-locales whose standard output or error cannot be written: a reader gone (`| head`) stops it quietly with
// 141, a full disk is said with exit status 1 (as `mt-eval locales` does), and neither is taken for a method's error;
// standard error that cannot be written loses the progress, not the run.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { makeProject } from './helpers/champollion.js';
import { nodePackage } from './helpers/guests.js';

const bin = join(nodePackage, 'bin', 'mt-eval-locales.js');
const noFull = existsSync('/dev/full') ? false : 'no /dev/full here';

// Runs the command: {status, stdout, stderr} (stdio: what replaces the pipes, index 1 and 2).
function locales(argv, { cwd, stdout = 'pipe', stderr = 'pipe', closeStdout = false } = {}) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [bin, ...argv], { cwd, stdio: ['ignore', stdout, stderr] });
    if (closeStdout) child.stdout.destroy(); // (the reader is gone before anything is written)
    const text = { stdout: '', stderr: '' };
    child.stdout?.on('data', (chunk) => { text.stdout += chunk; });
    child.stderr?.on('data', (chunk) => { text.stderr += chunk; });
    child.on('close', (status) => resolve({ status, ...text }));
  });
}

test('stdout whose reader is gone: exit status 141, nothing said', async () => {
  const run = await locales(['--help'], { closeStdout: true });
  assert.equal(run.status, 141, run.stderr);
  assert.equal(run.stderr, '');
});

test('stdout that cannot be written (a full disk): said in one line, exit status 1, not blamed on a method', { skip: noFull }, async (t) => {
  const full = openSync('/dev/full', 'w');
  t.after(() => closeSync(full));
  const help = await locales(['--help'], { stdout: full });
  assert.equal(help.status, 1);
  assert.match(help.stderr, /^mt-eval-locales: cannot write to standard output: No space left on device$/m);
  assert.doesNotMatch(help.stderr, /method/);

  const project = makeProject({
    config: { version: 3, inputLocale: 'en', pairs: { 'en:es': { methodPlugin: 'upper' } } }, plugins: ['upper'],
    files: { 'locales/en.json': { a: 'A' } },
  });
  t.after(project.cleanup);
  const run = await locales(['--quiet', '--json'], { cwd: project.root, stdout: full });
  assert.equal(run.status, 1);
  assert.match(run.stderr, /cannot write to standard output/);
  assert.equal(project.json('locales/es.json').a, 'spa: A', 'what was translated is written');
});

test('stderr that cannot be written loses the progress, not the run: every key is translated and written', { skip: noFull }, async (t) => {
  const full = openSync('/dev/full', 'w');
  t.after(() => closeSync(full));
  const source = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`k${i}`, `Text ${i}`]));
  const project = makeProject({
    config: { version: 3, inputLocale: 'en', pairs: { 'en:es': { methodPlugin: 'upper', batchSize: 4 } } },
    plugins: ['upper'], files: { 'locales/en.json': source },
  });
  t.after(project.cleanup);
  const run = await locales(['--json'], { cwd: project.root, stderr: full });
  assert.equal(run.status, 0, run.stdout);
  const report = JSON.parse(run.stdout);
  assert.equal(report.ok, true);
  assert.equal(report.interrupted ?? false, false);
  assert.equal(Object.keys(project.json('locales/es.json')).length, 40);
});
