// mt-eval-locales refuses as Python's `mt-eval locales` does: --wait values, a project still in use once
// --wait has run out, and (with --json) every error as a JSON report on stdout.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { acquireProjectLock } from '../index.js';
import { makeProject, runLocales as run } from './helpers/champollion.js';

const config = (pairs) => ({ version: 3, inputLocale: 'en', localesDir: 'locales', pairs });

const reverseProject = (files = { 'locales/en.json': { a: 'A' } }) => makeProject({
  config: config({ 'en:es': { methodPlugin: 'reverse' } }), plugins: ['reverse'], files,
});

test('--wait takes only seconds, 0 or more, or inf, and says so naming --wait', async (t) => {
  const project = reverseProject();
  t.after(project.cleanup);
  for (const value of ['-1', 'nan', 'INF', 'infinity', 'abc', '1e3', '', '-.5']) {
    const result = await run(project, '--wait', value);
    assert.equal(result.status, 2, value);
    assert.equal(result.stderr.split('\n')[0], `mt-eval-locales: --wait ${value}: give a number of seconds, 0 or more (e.g. `
      + '--wait 300), or inf (or --wait alone) to wait as long as it takes');
  }
  for (const value of ['0', '0.2', '.5', '3.', 'inf']) assert.equal((await run(project, '--wait', value)).status, 0, value);
});

test('once --wait runs out, it says how long it waited and who still holds the project', async (t) => {
  const project = reverseProject();
  t.after(project.cleanup);
  const holder = await acquireProjectLock(join(project.root, 'locales'), { command: 'a test' });
  let result;
  try {
    result = await run(project, '--wait', '0.3');
  } finally {
    await holder.release();
  }
  assert.equal(result.status, 1);
  const last = result.stderr.trimEnd().split('\n').at(-1);
  assert.ok(last.startsWith(`mt-eval-locales: champollion project <project>/locales is still in use by pid ${process.pid} `
    + '(a test, started '), last);
  assert.ok(last.endsWith(') after waiting 0.3 s for it. Let it finish, then run again, or give a longer --wait'), last);
  assert.doesNotMatch(result.stderr, /give --wait to wait/);
});

test('with --json, an error is a report on stdout: ok false, error {kind, message}, no locales', async (t) => {
  const project = reverseProject();
  t.after(project.cleanup);
  const report = async () => {
    const result = await run(project, '--json');
    assert.equal(result.status, 1, result.stderr);
    const found = JSON.parse(result.stdout);
    assert.ok(result.stderr.endsWith(`mt-eval-locales: ${found.error.message}\n`), result.stderr);
    return found;
  };
  project.write('champollion.config.json', config({ 'en:es': { methodPlugin: 'reverse', temperature: 'warm' } }));
  assert.deepEqual(await report(), { dryRun: false, ok: false, error: { kind: 'config', message: '<project>/champollion.config.json '
    + 'is not a valid champollion config\nerror: <project>/champollion.config.json $.pairs["en:es"].temperature: expected a number, '
    + 'got the string "warm"\n    fix: give "temperature" as a number, e.g. "temperature": 1' }, locales: [] });

  project.write('champollion.config.json', config({ 'en:es': { methodPlugin: 'reverse' } }));
  const holder = await acquireProjectLock(join(project.root, 'locales'), { command: 'a test' });
  let busy;
  try {
    busy = await report();
  } finally {
    await holder.release();
  }
  assert.equal(busy.error.kind, 'busy');
  assert.match(busy.error.message, /is in use by pid \d+ \(a test, .*\)\. Wait for it to finish, or give --wait to wait$/);

  project.write('locales/.champollion-lock.json', '[');
  const broken = await report();
  assert.equal(broken.error.kind, 'project');
  assert.match(broken.error.message, /^<project>\/locales\/\.champollion-lock\.json: cannot read the lock file: invalid JSON at line 1, column 2/);

  project.write('locales/.champollion-lock.json', '{"version": 1, "files": {}}');
  project.write('broken/method.json', { name: 'Broken', node_entry: 'translate.mjs', dependencies: [] });
  project.write('broken/translate.mjs', 'export const translate = ;\n');
  project.write('champollion.config.json', config({ 'en:es': { methodPlugin: './broken' } }));
  const start = await report();
  assert.equal(start.error.kind, 'method');
  assert.match(start.error.message, /^pair en:es: broken \(<project>\/broken\) cannot start: /);

  project.write('champollion.config.json', config({ 'en:es': { methodPlugin: 'reverse' } }));
  const done = await run(project, '--json');
  assert.equal(done.status, 0);
  assert.equal(JSON.parse(done.stdout).error, null);
});

test('a config with errors says its warnings with them: every problem in one go', async (t) => {
  const project = reverseProject();
  t.after(project.cleanup);
  const problem = (severity, path, message, fix) => `${severity}: <project>/champollion.config.json ${path}: ${message}\n    fix: ${fix}`;
  project.write('champollion.config.json', { version: 3, pairs: {} });
  const empty = await run(project, '--json');
  assert.equal(empty.status, 1);
  // (before: the inputLocale error alone; "no pairs" came only once an inputLocale was given)
  assert.equal(JSON.parse(empty.stdout).error.message, [
    '<project>/champollion.config.json is not a valid champollion config',
    problem('error', '$.inputLocale', 'no inputLocale, and no pair key to take it from', 'add "inputLocale": the locale of your source strings, e.g. "en"'),
    problem('warning', '$.pairs', 'no pairs: nothing will be translated', 'add one, e.g. "en:es": {"methodPlugin": "my-method"}'),
  ].join('\n'));
  project.write('champollion.config.json', { version: 3, inputLocal: 'en', pairs: { 'en:es': { methodPlugin: 'reverse' } }, localesDir: 5 });
  const typo = await run(project);
  assert.equal(typo.status, 1);
  assert.equal(typo.stderr, `${[
    'mt-eval-locales: <project>/champollion.config.json is not a valid champollion config',
    problem('error', '$.localesDir', 'expected a string, got the number 5', 'give "localesDir" as a string, in double quotes'),
    problem('warning', '$.inputLocal', 'unknown field "inputLocal"', 'did you mean "inputLocale"? Known fields: version, inputLocale, pairs, localesDir, $schema'),
  ].join('\n')}\n`);
});

test('a UTF-16 or UTF-32 locale file is named as such, with the command that converts it', async (t) => {
  const project = reverseProject({ 'locales/en/d.json': {} });
  t.after(project.cleanup);
  const utf16be = Buffer.from('{"b": "Two"}', 'utf16le').swap16();
  writeFileSync(join(project.root, 'locales', 'en', 'a.json'), Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('{"a": "One"}', 'utf16le')]));
  writeFileSync(join(project.root, 'locales', 'en', 'b.json'), Buffer.concat([Buffer.from([0xfe, 0xff]), utf16be]));
  writeFileSync(join(project.root, 'locales', 'en', 'c.json'), Buffer.from([0, 0, 0xfe, 0xff, 0, 0, 0, 0x7b, 0, 0, 0, 0x7d]));
  const result = await run(project, '--json');
  assert.equal(result.status, 1);
  const errors = Object.fromEntries(JSON.parse(result.stdout).locales[0].files.filter((file) => file.error)
    .map((file) => [file.file, file.error]));
  const refused = (name, encoding, mark) => {
    const path = `<project>/locales/en/${name}`;
    return `${path}: ${encoding} text, not UTF-8 (it starts with the byte-order mark ${mark}); save it as UTF-8, `
      + `e.g. iconv -f ${encoding} -t UTF-8 ${path} > ${path}.utf8 && mv ${path}.utf8 ${path}`;
  };
  assert.deepEqual(errors, { 'es/a.json': refused('a.json', 'UTF-16', 'FF FE'), 'es/b.json': refused('b.json', 'UTF-16', 'FE FF'),
    'es/c.json': refused('c.json', 'UTF-32', '00 00 FE FF') });
});

test('--start-timeout takes seconds above 0, in the words of mt-eval locales, and bounds a plugin\'s start', async (t) => {
  // A plugin whose command never answers initialize: a model that takes long to load, as a guest.
  const project = makeProject({
    config: config({ 'en:es': { methodPlugin: 'slow-start' } }), plugins: [],
    files: {
      'locales/en.json': { a: 'A' },
      '.champollion/methods/slow-start/method.json': {
        name: 'Slow start', method_id: 'slow-start', command: [process.execPath, '-e', 'setTimeout(() => {}, 20000)'],
        dependencies: [],
      },
    },
  });
  t.after(project.cleanup);
  for (const [value, said] of [['0', 'must be a finite number above 0, got 0'], ['-1', 'must be a finite number above 0, got -1'],
    ['inf', 'must be a finite number above 0, got inf'], ['abc', "must be a number, got 'abc'"], ['', "must be a number, got ''"]]) {
    const result = await run(project, '--start-timeout', value);
    assert.equal(result.status, 2, value);
    assert.equal(result.stderr.trimEnd().split('\n').at(-1), `mt-eval-locales: error: argument --start-timeout: ${said}`);
  }
  const started = Date.now();
  const result = await run(project, '--start-timeout', '0.5');
  assert.equal(result.status, 1);
  assert.ok(Date.now() - started < 10_000, 'it waited for the default 30 s');
  assert.match(result.stderr, /slow-start .* cannot start: .*did not answer initialize within 0\.5 s/);
});
