// A translate.js run in mt-eval-locales's own process prints with console.log or writes to process.stdout: that
// goes to stderr, so stdout holds the report alone (with --json, JSON that parses).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';

import { main } from '../lib/champollion/cli.js';
import { translateLocales } from '../lib/champollion/sync.js';
import { captureStream, makeProject } from './helpers/champollion.js';
import { isRunning, nodePackage, pythonGuest } from './helpers/guests.js';

const BIN = join(nodePackage, 'bin', 'mt-eval-locales.js');

function run(project, ...argv) {
  const child = spawn(process.execPath, [BIN, '--config', project.root, '--quiet', ...argv], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => { stdout += chunk; });
  child.stderr.on('data', (chunk) => { stderr += chunk; });
  return new Promise((resolve) => child.on('close', (status) => resolve({ status, stdout, stderr })));
}

test('what an in-process method prints reaches stderr, and stdout is the report alone', async (t) => {
  const project = makeProject({
    config: { version: 3, inputLocale: 'en', pairs: { 'en:es': { methodPlugin: 'upper' } } },
    files: { 'locales/en/common.json': { hello: 'Hello', bye: 'Bye' } }, plugins: ['upper'],
  });
  t.after(project.cleanup);
  const translate = join('.champollion', 'methods', 'upper', 'translate.js');
  project.write(translate, project.read(translate).replace('export async function translate(entries, config) {\n',
    'export async function translate(entries, config) {\n  console.log(\'upper: %d entries\', entries.length);\n'
    + '  console.info({ busy: true });\n  process.stdout.write(\'a stray write\\n\');\n'));
  const result = await run(project, '--json');
  assert.equal(result.status, 0, result.stderr);
  const report = JSON.parse(result.stdout);
  assert.equal(report.ok, true);
  assert.match(result.stderr, /^upper: 2 entries$/m);
  assert.match(result.stderr, /^\{ busy: true \}$/m);
  assert.match(result.stderr, /^a stray write$/m);
  assert.deepEqual(JSON.parse(project.read(join('locales', 'es', 'common.json'))), { hello: 'spa: HELLO', bye: 'spa: BYE' });
  const text = await run(project, '--force');
  assert.equal(text.status, 0, text.stderr);
  assert.doesNotMatch(text.stdout, /upper: 2 entries|a stray write/);
  assert.match(text.stderr, /^upper: 2 entries$/m);
});

function upperProject(prefix, config = {}) {
  const files = { 'locales/en/common.json': Object.fromEntries(Array.from({ length: 6 }, (_, i) => [`k${i}`, `text ${i}`])) };
  const project = makeProject({
    config: { version: 3, inputLocale: 'en', pairs: { 'en:es': { methodPlugin: 'upper', batchSize: 2, ...config } } },
    files, plugins: ['upper'],
  });
  const translate = join('.champollion', 'methods', 'upper', 'translate.js');
  project.write(translate, project.read(translate).replace('export async function translate(entries, config) {\n',
    `let calls = 0;\nexport async function translate(entries, config) {\n  calls += 1;\n${prefix}`));
  return project;
}

test('process.exit() in an in-process method fails the call it was made in, not the whole command', async (t) => {
  const project = upperProject("  if (entries.some((e) => e.source === 'text 3')) process.exit(3);\n");
  t.after(project.cleanup);
  const result = await run(project, '--json');
  assert.equal(result.status, 1, result.stderr);
  const [file] = JSON.parse(result.stdout).locales[0].files;
  assert.deepEqual(file.translated.sort(), ['k0', 'k1', 'k2', 'k4', 'k5']);
  // (in its own words, as Python's "the method called sys.exit(3) …": no "the method failed: MethodExitError" before it)
  assert.match(JSON.stringify(file), /"the method called process\.exit\(3\): a translate\.js returns its results or throws/);
  const written = JSON.parse(project.read(join('locales', 'es', 'common.json')));
  assert.deepEqual(Object.keys(written).sort(), ['k0', 'k1', 'k2', 'k4', 'k5']);
});

test('an error that escapes the method\'s calls stops the run as Ctrl-C does, keeping what was translated', async (t) => {
  const project = upperProject("  if (calls === 2) setTimeout(() => { throw new TypeError('boom in a timer'); }, 10);\n"
    + '  if (calls >= 2) await sleep(300);\n');
  t.after(project.cleanup);
  const result = await run(project);
  assert.equal(result.status, 1, result.stderr);
  assert.match(result.stderr, /^mt-eval-locales: a method's error escaped its calls: TypeError: boom in a timer \(at .*translate\.js:\d+:\d+\)\)$/m);
  assert.match(result.stderr, /^mt-eval-locales: stopped by that error; kept 2 keys translated \(1 file written, with their lock entries\); not translated: 4 keys of es\. Run the same command again/m);
  assert.deepEqual(JSON.parse(project.read(join('locales', 'es', 'common.json'))), { k0: 'spa: TEXT 0', k1: 'spa: TEXT 1' });
  assert.doesNotMatch(result.stderr, /^\s+at /m); // no Node stack
});

test('an error that escapes the method after the last call is one warning line, and the exit status stays the run\'s', async (t) => {
  const project = upperProject("  if (calls === 3) setTimeout(() => { throw new RangeError('boom after the run'); }, 50);\n");
  t.after(project.cleanup);
  const result = await run(project);
  assert.equal(result.status, 0, result.stderr);
  assert.match(result.stderr, /^mt-eval-locales: warning: a method's error escaped after the run: RangeError: boom after the run \(at .*translate\.js:\d+:\d+\)\)$/m);
  assert.doesNotMatch(result.stderr, /^\s+at /m); // no Node stack
  assert.equal(Object.keys(JSON.parse(project.read(join('locales', 'es', 'common.json')))).length, 6);
});

// A process that starts one of its own (its pid written to the file named by its argument), and waits.
const GRANDPARENT = "const c = require('node:child_process').spawn(process.execPath, ['-e', 'setTimeout(() => {}, 600000)'], "
  + "{ stdio: 'ignore' }); require('node:fs').writeFileSync(process.argv[1], String(c.pid)); setTimeout(() => {}, 600000);";

test('a process an in-process method started and left running is ended when the command ends, and named', async (t) => {
  const project = makeProject({
    config: { version: 3, inputLocale: 'en', pairs: { 'en:es': { methodPlugin: 'upper' } } },
    files: { 'locales/en/common.json': { hello: 'Hello' } }, plugins: ['upper'],
  });
  t.after(project.cleanup);
  const translate = join('.champollion', 'methods', 'upper', 'translate.js');
  const pidFile = join(project.root, 'child.pid');
  project.write(translate, `import { spawn } from 'node:child_process';\nimport { existsSync, writeFileSync } from 'node:fs';\n${
    project.read(translate).replace('export async function translate(entries, config) {\n',
      'export async function translate(entries, config) {\n'
      + `  const child = spawn(process.execPath, ['-e', ${JSON.stringify(GRANDPARENT)}, ${JSON.stringify(`${pidFile}.grand`)}], { stdio: 'ignore' });\n`
      + `  writeFileSync(${JSON.stringify(pidFile)}, String(child.pid));\n`
      + `  while (!existsSync(${JSON.stringify(`${pidFile}.grand`)})) await new Promise((resolve) => setTimeout(resolve, 10));\n`)}`);
  const result = await run(project);
  assert.equal(result.status, 0, result.stderr);
  const pid = Number(project.read('child.pid'));
  assert.match(result.stderr, new RegExp(`mt-eval-locales: warning: 1 process started in this command was still running at its end \\(pid ${pid}: `));
  assert.equal(isRunning(pid), false);
  assert.equal(isRunning(Number(project.read('child.pid.grand'))), false); // what it started ended too
});

test('a close() that throws is one warning line: the report is printed and the exit status stays the run\'s', async (t) => {
  const project = upperProject('');
  t.after(project.cleanup);
  const translate = join('.champollion', 'methods', 'upper', 'translate.js');
  project.write(translate, `${project.read(translate)}\nexport async function close() { throw new Error('cannot close'); }\n`);
  const result = await run(project, '--json');
  assert.equal(result.status, 0, result.stderr);
  assert.equal(JSON.parse(result.stdout).ok, true);
  assert.match(result.stderr, /^mt-eval-locales: warning: champollion-upper's close\(\) raised Error: cannot close \(at .*translate\.js:\d+:\d+\)\); carried on without it$/m);
  assert.equal(Object.keys(JSON.parse(project.read(join('locales', 'es', 'common.json')))).length, 6);
});

test('a close() that never returns is waited for a bounded time, then the run ends with its report', async (t) => {
  const project = upperProject('');
  t.after(project.cleanup);
  const translate = join('.champollion', 'methods', 'upper', 'translate.js');
  project.write(translate, `${project.read(translate)}\nexport function close() { return new Promise(() => {}); }\n`);
  const problems = [];
  const report = await translateLocales(project.root, { closeTimeoutS: 0.2, onCloseProblem: (problem) => problems.push(problem) });
  assert.deepEqual(report.locales.map((locale) => locale.sent), [6]);
  assert.deepEqual(problems, ["champollion-upper's close() did not return within 0.2 s"]);
  assert.equal(Object.keys(JSON.parse(project.read(join('locales', 'es', 'common.json')))).length, 6);
  // The project is free again: its lock was released after the bounded wait.
  assert.equal((await translateLocales(project.root, { closeTimeoutS: 0.2 })).locales[0].sent, 0);
});

test('results for entries the method was not sent are said as the command\'s warnings naming the pair, in process and through a guest',
  { skip: pythonGuest().skip }, async (t) => {
    const said = 'mt-eval-locales: warning: pair en:es: the method returned results that match no entry it was sent (ids "1-stray"); '
      + 'they were dropped (a result is {"id": entry["id"], "predicted": TEXT}, one per entry)\n';
    for (const entry of ['translate.js', 'pipeline.py']) { // in process; a Python plugin through `mt-eval serve`
      const project = makeProject({ config: { version: 3, inputLocale: 'en', pairs: { 'en:es': { methodPlugin: 'reverse' } } },
        files: { 'locales/en.json': { a: '!stray one', b: 'Fine' } }, plugins: ['reverse'] });
      t.after(project.cleanup);
      if (entry === 'pipeline.py') {
        const manifest = project.json('.champollion/methods/reverse/method.json');
        delete manifest.node_entry;
        project.write('.champollion/methods/reverse/method.json', manifest);
      }
      const stdout = captureStream();
      const stderr = captureStream();
      const status = await main(['--config', project.root, '--quiet'], { stdout, stderr, env: { ...process.env, MT_EVAL: pythonGuest().command[0] } });
      assert.equal(status, 0, stderr.text());
      assert.equal(stderr.text(), said, entry);
    }
  });
