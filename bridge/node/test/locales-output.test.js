// mt-eval-locales whose standard output or error cannot be written: a reader gone (`| head`) stops it quietly with
// 141, a full disk is said with exit status 1 (as `mt-eval locales` does), and neither is taken for a method's error;
// standard error that cannot be written loses the progress, not the run.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { main } from '../lib/champollion/cli.js';
import { captureStream, makeProject, runLocales } from './helpers/champollion.js';
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

test('a call the method has not answered for long is said now and then; normal runs and --quiet say nothing of it', async (t) => {
  const project = makeProject({ config: { version: 3, inputLocale: 'en', pairs: { 'en:es': { methodPlugin: 'reverse' } } },
    files: { 'locales/en.json': { slow: '!sleep 700 slow', fast: 'Fine' } }, plugins: ['reverse'] });
  t.after(project.cleanup);
  const run = async (argv, waiting, tty = false) => {
    const stdout = captureStream();
    const stderr = captureStream({ tty });
    assert.equal(await main(['--config', project.root, ...argv], { stdout, stderr, waiting }), 0, stderr.text());
    return stderr.text().replace(/sent \d+ s ago/g, 'sent N s ago');
  };
  const said = 'es: still waiting for the method: 2 strings sent N s ago (a call may take 120 s a string before it fails); '
    + 'Ctrl-C stops, keeping what was translated';
  const soon = { afterS: 0.2, everyS: 60 }; // (10 s, then every 30 s, as the command says it)
  assert.equal(await run([], soon), `${said}\nes: 2/2 strings answered\n`);
  assert.equal(await run(['--force'], soon, true), `\r${said}\x1b[K\res: 2/2 strings answered\x1b[K\n`); // (in place)
  assert.equal(await run(['--force', '--quiet'], soon), '');
  assert.equal(await run(['--force'], { afterS: 10, everyS: 30 }), 'es: 2/2 strings answered\n');
});

test('keys, file names, fields and locales holding ESC or U+202E are shown escaped, and --json writes them as escapes', async (t) => {
  const odd = 'x\x1b[2J\u202e';
  const project = makeProject({ config: { version: 3, inputLocale: 'en', pairs: { 'en:es': { methodPlugin: 'reverse' } }, [odd]: 1 },
    files: { [`locales/en/${odd}.json`]: { [odd]: 'Hi' } }, plugins: ['reverse'] });
  t.after(project.cleanup);
  const shown = 'x\\x1b[2J\\u202e';
  const text = await runLocales(project, '--dry-run');
  assert.equal(text.status, 0, text.stderr);
  assert.equal(text.stdout.split('\n').slice(1, 3).join('\n'), `  es/${shown}.json  1 to translate\n    + ${shown} (new)`);
  assert.match(text.stderr, new RegExp(`unknown field "${shown.replaceAll('\\', '\\\\').replace('[', '\\[')}"`));
  const json = await runLocales(project, '--dry-run', '--json');
  assert.equal(json.status, 0, json.stderr);
  assert.ok(json.stdout.includes('"x\\u001b[2J\\u202e"'), json.stdout);
  assert.deepEqual(JSON.parse(json.stdout).locales[0].files[0].due, [{ key: odd, reason: 'new' }]);
  const refused = await runLocales(project, '--json', '--locale', odd);
  assert.equal(refused.status, 1);
  for (const run of [text, json, refused]) assert.doesNotMatch(run.stdout + run.stderr, /[\x1b\u202e]/u);
  assert.match(refused.stderr, new RegExp(`--locale ${shown.replaceAll('\\', '\\\\').replace('[', '\\[')}`));
});
