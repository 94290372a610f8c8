// A champollion project's files as mt-eval-locales reads and writes them (as Python's `mt-eval locales`):
// JSON errors in the shared reader's words, files that cannot be written, modes kept, the locales
// directory and the plugin directories named as they are.
import assert from 'node:assert/strict';
import fs, { chmodSync, mkdirSync, readdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
import { basename, dirname, join } from 'node:path';
import { test } from 'node:test';

import { makeProject, runLocales as run } from './helpers/champollion.js';

const config = (pairs) => ({ version: 3, inputLocale: 'en', localesDir: 'locales', pairs });

test('JSON errors of locale, lock and method files: line, column and the fix, in the shared reader\'s words', async (t) => {
  const project = makeProject({
    config: config({ 'en:es': { methodPlugin: 'reverse' } }), plugins: ['reverse'],
    files: { 'locales/en/a.json': '{"a": "One",}', 'locales/en/b.json': { b: 'Two' }, 'locales/es/b.json': '{"b": "x" "c"}' },
  });
  t.after(project.cleanup);
  writeFileSync(join(project.root, 'locales', 'en', 'c.json'), Buffer.from('{"c": "\xff"}', 'latin1'));
  const first = await run(project, '--json');
  assert.equal(first.status, 1);
  const errors = JSON.parse(first.stdout).locales[0].files.map((file) => file.error);
  // What is wrong, then the reader's fix (whose words are the reader's to choose).
  assert.deepEqual(errors.map((error) => error.split('; ')[0]), [
    '<project>/locales/en/a.json: invalid JSON at line 1, column 13: Expecting property name enclosed in double quotes',
    "<project>/locales/es/b.json: invalid JSON at line 1, column 11: Expecting ',' delimiter",
    '<project>/locales/en/c.json: not valid UTF-8: byte 0xff at line 1 (offset 7)',
  ]);
  assert.ok(errors.every((error) => error.split('; ').length === 2), errors.join('\n'));

  project.write('locales/.champollion-lock.json', '{"version": 1, "files": {,}}');
  const lock = await run(project);
  assert.equal(lock.status, 1);
  assert.ok(lock.stderr.startsWith('mt-eval-locales: <project>/locales/.champollion-lock.json: cannot read the lock file: '
    + 'invalid JSON at line 1, column 26: Expecting property name enclosed in double quotes; '), lock.stderr);
  assert.ok(lock.stderr.endsWith(', or delete it to re-check every key\n'), lock.stderr);

  project.write('locales/.champollion-lock.json', '{"version": 1, "files": {}}');
  project.write('.champollion/methods/broken/method.json', "{'name': 'Broken'}");
  project.write('champollion.config.json', config({ 'en:es': { methodPlugin: 'revers' } }));
  const listed = await run(project);
  assert.equal(listed.status, 1);
  assert.ok(listed.stderr.includes('  - .champollion/methods/broken (unusable: method.json cannot be read: invalid JSON at '
    + 'line 1, column 2: Expecting property name enclosed in double quotes)\n'), listed.stderr);
});

test('a dangling symlink or a directory without method.json in .champollion/methods is named as such', async (t) => {
  const project = makeProject({ config: config({ 'en:es': { methodPlugin: 'apertium-eng-spa' } }), plugins: ['reverse'],
    files: { 'locales/en.json': { a: 'One' } } });
  t.after(project.cleanup);
  const methods = join(project.root, '.champollion', 'methods');
  symlinkSync('../../../apertium-eng-spa', join(methods, 'apertium-eng-spa')); // as in a copy of the example
  mkdirSync(join(methods, 'empty'));
  const target = join(dirname(project.root), 'apertium-eng-spa');
  const result = await run(project);
  assert.equal(result.status, 1);
  assert.equal(result.stderr, 'mt-eval-locales: pair "en:es": methodPlugin "apertium-eng-spa" names .champollion/methods/apertium-eng-spa, '
    + `which cannot be used: a symlink to ../../../apertium-eng-spa (${target}), which does not exist. Fix: make it the `
    + "plugin's directory (or a symlink to it), or set methodPlugin to the plugin's path. Plugins in <project>/.champollion/methods:\n"
    + `  - .champollion/methods/apertium-eng-spa (unusable: a symlink to ../../../apertium-eng-spa (${target}), which does not exist)\n`
    + '  - .champollion/methods/empty (unusable: a directory without method.json)\n'
    + '  - "Reverse (bridge reference method)" (method_id reverse) in .champollion/methods/reverse\n');
  project.write('champollion.config.json', config({ 'en:es': { methodPlugin: './.champollion/methods/empty' } }));
  const byPath = await run(project);
  assert.equal(byPath.stderr, 'mt-eval-locales: pair "en:es": methodPlugin "./.champollion/methods/empty": <project>/.champollion/methods/empty: '
    + 'a directory without method.json\n');
});

test('a localesDir that is not a directory is named with the config field and the fix', async (t) => {
  const project = makeProject({ config: { ...config({ 'en:es': { methodPlugin: 'reverse' } }), localesDir: 'nope' },
    plugins: ['reverse'], files: { 'locales/en.json': { a: 'One' } } });
  t.after(project.cleanup);
  for (const argv of [[], ['--dry-run']]) {
    const result = await run(project, ...argv);
    assert.deepEqual([result.status, result.stdout, result.stderr], [1, '', 'mt-eval-locales: localesDir <project>/nope does not '
      + 'exist: set "localesDir" in <project>/champollion.config.json to the directory that holds the locale files (en/*.json '
      + 'or en.json), relative to the config\n']);
  }
  project.write('nope', 'a file\n');
  assert.match((await run(project)).stderr, /^mt-eval-locales: localesDir <project>\/nope is not a directory: set /);
});

test('a rewritten target file and lock file keep their mode', async (t) => {
  const project = makeProject({ config: config({ 'en:es': { methodPlugin: 'reverse' } }), plugins: ['reverse'],
    files: { 'locales/en.json': { a: 'One' } } });
  t.after(project.cleanup);
  assert.equal((await run(project)).status, 0);
  const names = ['es.json', '.champollion-lock.json'];
  for (const name of names) chmodSync(join(project.root, 'locales', name), 0o600);
  project.write('locales/en.json', { a: 'One', b: 'Two' });
  assert.equal((await run(project)).status, 0);
  assert.deepEqual(project.json('locales/es.json'), { a: 'spa:enO', b: 'spa:owT' });
  assert.deepEqual(names.map((name) => statSync(join(project.root, 'locales', name)).mode & 0o777), [0o600, 0o600]);
});

test('a target that cannot be written is that file\'s error, found before anything is sent for it', async (t) => {
  const project = makeProject({
    config: config({ 'en:es': { methodPlugin: 'reverse' }, 'en:fr': { methodPlugin: 'reverse' } }), plugins: ['reverse'],
    files: { 'locales/en/common.json': { a: 'One' }, 'locales/en/other.json': { b: 'Two' },
      'locales/es/common.json/keep': 'a directory where the file goes\n', 'locales/fr': 'a file where the directory goes\n' },
  });
  t.after(project.cleanup);
  const result = await run(project, '--json');
  assert.equal(result.status, 1);
  const report = JSON.parse(result.stdout);
  assert.deepEqual(report.locales.map((locale) => [locale.locale, locale.sent]), [['es', 1], ['fr', 0]]);
  assert.deepEqual(Object.fromEntries(report.locales.flatMap((locale) => locale.files.map((file) => [file.file, file.error]))), {
    'es/common.json': '<project>/locales/es/common.json: cannot write it: a directory is in its place; move or remove that directory',
    'es/other.json': null,
    'fr/common.json': '<project>/locales/fr/common.json: cannot create its directory: <project>/locales/fr is not a directory; '
      + 'move or remove <project>/locales/fr',
    'fr/other.json': '<project>/locales/fr/other.json: cannot create its directory: <project>/locales/fr is not a directory; '
      + 'move or remove <project>/locales/fr',
  });
  assert.deepEqual(project.json('locales/es/other.json'), { b: 'spa:owT' });
  assert.deepEqual(Object.keys(project.json('locales/.champollion-lock.json').files), ['es/other.json']);
});

test('a write that fails is that file\'s error; its temporary file is removed and the others are written', async (t) => {
  const project = makeProject({ config: config({ 'en:es': { methodPlugin: 'reverse' } }), plugins: ['reverse'],
    files: { 'locales/en/common.json': { a: 'One' }, 'locales/en/other.json': { b: 'Two' } } });
  t.after(project.cleanup);
  const rename = fs.renameSync;
  t.mock.method(fs, 'renameSync', (source, target) => {
    if (basename(target) === 'common.json') throw Object.assign(new Error('EACCES: permission denied'), { code: 'EACCES' });
    return rename(source, target);
  });
  syncBuiltinESMExports();
  t.after(() => { t.mock.restoreAll(); syncBuiltinESMExports(); });
  const result = await run(project);
  assert.equal(result.status, 1);
  assert.ok(result.stdout.includes('  es/common.json  error: <project>/locales/es/common.json: cannot write it: Permission denied; '
    + 'make its directory writable\n'), result.stdout);
  assert.deepEqual(project.json('locales/es/other.json'), { b: 'spa:owT' });
  assert.deepEqual(readdirSync(join(project.root, 'locales', 'es')), ['other.json'], 'no temporary file is left');
  assert.deepEqual(Object.keys(project.json('locales/.champollion-lock.json').files), ['es/other.json']);
});

test('a read-only target directory is found before anything is sent', { skip: process.getuid?.() === 0 && 'root writes in a read-only directory' }, async (t) => {
  const project = makeProject({ config: config({ 'en:es': { methodPlugin: 'reverse' } }), plugins: ['reverse'],
    files: { 'locales/en/common.json': { a: 'One' }, 'locales/es/common.json': {} } });
  t.after(project.cleanup);
  const es = join(project.root, 'locales', 'es');
  chmodSync(es, 0o555);
  let result;
  try {
    result = await run(project, '--json');
  } finally {
    chmodSync(es, 0o755);
  }
  const report = JSON.parse(result.stdout);
  assert.equal(report.locales[0].sent, 0);
  assert.equal(report.locales[0].files[0].error, '<project>/locales/es/common.json: cannot write it: <project>/locales/es is '
    + 'not writable; make it writable (chmod u+wx <project>/locales/es)');
});

test('a target file made read-only is refused, left as it is, and named with the fix; the other targets are written', async (t) => {
  const project = makeProject({
    config: config({ 'en:es': { methodPlugin: 'reverse' }, 'en:fr': { methodPlugin: 'reverse' } }), plugins: ['reverse'],
    files: { 'locales/en/common.json': { a: 'One', b: 'Two' }, 'locales/en/other.json': { c: 'Three' },
      'locales/es/common.json': '{"a": "Uno"}\n' },
  });
  t.after(project.cleanup);
  const frozen = join(project.root, 'locales', 'es', 'common.json');
  chmodSync(frozen, 0o444);
  const refused = '<project>/locales/es/common.json: cannot write it: the file is read-only (mode 0444), so it is left as '
    + 'it is; make it writable (chmod u+w <project>/locales/es/common.json) to have it written, or remove "en:es" from the '
    + 'pairs of <project>/champollion.config.json';
  const result = await run(project, '--json');
  assert.equal(result.status, 1);
  const report = JSON.parse(result.stdout);
  assert.deepEqual(report.locales.map((locale) => [locale.locale, locale.sent]), [['es', 1], ['fr', 3]]);
  assert.deepEqual(Object.fromEntries(report.locales.flatMap((locale) => locale.files.map((file) => [file.file, file.error]))), {
    'es/common.json': refused, 'es/other.json': null, 'fr/common.json': null, 'fr/other.json': null,
  });
  assert.equal(project.read('locales/es/common.json'), '{"a": "Uno"}\n'); // (before: replaced, still 0444)
  assert.equal(statSync(frozen).mode & 0o777, 0o444);
  assert.deepEqual(project.json('locales/fr/common.json'), { a: 'fra:enO', b: 'fra:owT' });
  assert.deepEqual(Object.keys(project.json('locales/.champollion-lock.json').files).sort(),
    ['es/other.json', 'fr/common.json', 'fr/other.json']);

  // Up to date, a read-only file is no error; one that only a removed key would change is refused as well.
  chmodSync(frozen, 0o644);
  assert.equal((await run(project)).status, 0);
  const written = project.read('locales/es/common.json');
  chmodSync(frozen, 0o444);
  assert.equal((await run(project)).status, 0);
  project.write('locales/en/common.json', { a: 'One' });
  const removed = await run(project);
  assert.equal(removed.status, 1);
  assert.ok(removed.stdout.includes(`  es/common.json  error: ${refused}\n`), removed.stdout);
  assert.equal(project.read('locales/es/common.json'), written);
});

test('a target that is a source file (a hard link, or a link into the source folder) is refused, the source kept', async (t) => {
  const project = makeProject({
    config: config({ 'en:es': { methodPlugin: 'reverse' }, 'en:de': { methodPlugin: 'reverse' } }), plugins: ['reverse'],
    files: { 'locales/en/common.json': { a: 'One' }, 'locales/en/other.json': { b: 'Two' } },
  });
  t.after(project.cleanup);
  const sources = project.read('locales/en/common.json') + project.read('locales/en/other.json');
  mkdirSync(join(project.root, 'locales', 'es'));
  fs.linkSync(join(project.root, 'locales', 'en', 'common.json'), join(project.root, 'locales', 'es', 'common.json'));
  mkdirSync(join(project.root, 'locales', 'de'));
  symlinkSync('../en/other.json', join(project.root, 'locales', 'de', 'common.json'));
  for (const argv of [[], ['--force']]) {
    const result = await run(project, '--json', ...argv);
    assert.equal(result.status, 1);
    const errors = Object.fromEntries(JSON.parse(result.stdout).locales.flatMap((locale) => locale.files.map((file) => [file.file, file.error])));
    assert.deepEqual(errors, {
      'es/common.json': '<project>/locales/es/common.json: cannot write it: it is the source file <project>/locales/en/common.json '
        + '(a hard link), so its translations would be written over the en strings; remove <project>/locales/es/common.json: '
        + 'the next run writes the translations in its place',
      'es/other.json': null,
      'de/common.json': '<project>/locales/de/common.json: cannot write it: it is in the source folder <project>/locales/en '
        + '(<project>/locales/de/common.json is a symbolic link to ../en/other.json), so its translations would be written over '
        + 'the en strings; remove <project>/locales/de/common.json: the next run writes the translations in its place',
      'de/other.json': null,
    });
    assert.equal(project.read('locales/en/common.json') + project.read('locales/en/other.json'), sources);
    assert.deepEqual(Object.keys(project.json('locales/.champollion-lock.json').files).sort(), ['de/other.json', 'es/other.json']);
  }
});
