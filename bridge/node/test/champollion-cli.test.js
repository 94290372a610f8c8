// mt-eval-locales on test projects: what is sent, what is written, what the lock file keeps.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { main, parseArguments } from '../lib/champollion/cli.js';
import { captureStream, makeProject } from './helpers/champollion.js';
import { nodePackage } from './helpers/guests.js';

// Written as text: an object literal would move the integer-like key "404" to the front.
const SOURCE = `{
  "greeting": "Hello {{name}}!",
  "nav": {"home": "Home", "about": "About <b>us</b>"},
  "cart_one": "You have {{count}} item",
  "cart_other": "You have {{count}} items",
  "404": "Page not found",
  "total": "%s of %d",
  "version": 2,
  "only": "{{x}}"
}
`;
const config = (pairs) => ({ version: 3, inputLocale: 'en', localesDir: 'locales', pairs });

async function run(project, ...argv) {
  const stdout = captureStream();
  const stderr = captureStream();
  const previous = process.env.CHAMPOLLION_FIXTURE_LOG;
  process.env.CHAMPOLLION_FIXTURE_LOG = project.log;
  try {
    const status = await main(['--config', project.root, '--quiet', ...argv], { stdout, stderr, env: process.env });
    return { status, stdout: stdout.text(), stderr: stderr.text() };
  } finally {
    if (previous === undefined) delete process.env.CHAMPOLLION_FIXTURE_LOG;
    else process.env.CHAMPOLLION_FIXTURE_LOG = previous;
  }
}

test('first run translates every key; the second sends nothing; one changed string is sent alone', async (t) => {
  const project = makeProject({ config: config({ 'en:es': { methodPlugin: 'upper' } }), files: { 'locales/en/common.json': SOURCE } });
  t.after(project.cleanup);
  const first = await run(project, '--json');
  assert.equal(first.status, 0, first.stderr);
  const report = JSON.parse(first.stdout);
  assert.equal(report.locales[0].sent, 7, 'cart_many and cart_other share one source text, sent once');
  assert.deepEqual(report.locales[0].files[0].copied, ['only']);
  // Source key order (integer-like keys too), Spanish plural categories, placeholders restored.
  assert.equal(project.read('locales/es/common.json'), [
    '{',
    '  "greeting": "spa: HELLO {{name}}!",',
    '  "nav": {',
    '    "home": "spa: HOME",',
    '    "about": "spa: ABOUT <b>US</b>"',
    '  },',
    '  "cart_one": "spa: YOU HAVE {{count}} ITEM",',
    '  "cart_many": "spa: YOU HAVE {{count}} ITEMS",',
    '  "cart_other": "spa: YOU HAVE {{count}} ITEMS",',
    '  "404": "spa: PAGE NOT FOUND",',
    '  "total": "spa: %s OF %d",',
    '  "version": 2,',
    '  "only": "{{x}}"',
    '}',
    ''].join('\n'));
  assert.equal(project.calls().length, 1);

  const second = await run(project, '--json');
  assert.equal(second.status, 0);
  assert.equal(JSON.parse(second.stdout).locales[0].sent, 0);
  assert.equal(JSON.parse(second.stdout).locales[0].files[0].upToDate, 9);
  assert.equal(project.calls().length, 1, 'nothing was sent');

  project.write('locales/en/common.json', SOURCE.replace('"Home"', '"Start"'));
  const before = project.read('locales/es/common.json');
  const third = await run(project);
  assert.equal(third.status, 0);
  assert.deepEqual(project.calls().at(-1).sources, ['Start']);
  assert.equal(project.read('locales/es/common.json'), before.replace('spa: HOME', 'spa: START'));
});

test('a lost or repeated placeholder fails that key, which keeps its previous value', async (t) => {
  const project = makeProject({ config: config({ 'en:es': { methodPlugin: 'upper' } }), files: { 'locales/en/a.json': { a: 'Hi {{name}}', b: 'Bye {{name}}', c: 'Ok' } } });
  t.after(project.cleanup);
  assert.equal((await run(project)).status, 0);
  project.write('locales/en/a.json', { a: 'Hi {{name}} #drop', b: 'Bye {{name}} #double', c: 'Ok #fail', d: 'New #fail' });
  const result = await run(project);
  assert.equal(result.status, 1);
  assert.match(result.stdout, /failed a: the translation "spa: HI  #DROP" lost placeholder \{\{name\}\}; kept the previous value/);
  assert.match(result.stdout, /failed b: the translation "spa: BYE ⟦0⟧⟦0⟧ #DOUBLE" repeated placeholder \{\{name\}\} \(2 times\); kept the previous value/);
  assert.match(result.stdout, /failed c: asked to fail; kept the previous value/);
  assert.match(result.stdout, /failed d: asked to fail; left out of the file/);
  assert.deepEqual(project.json('locales/es/a.json'), { a: 'spa: HI {{name}}', b: 'spa: BYE {{name}}', c: 'spa: OK' });
  // The failed keys are tried again next time.
  const again = JSON.parse((await run(project, '--json', '--dry-run')).stdout);
  assert.deepEqual(again.locales[0].files[0].due.map((d) => [d.key, d.reason]),
    [['a', 'source changed'], ['b', 'source changed'], ['c', 'source changed'], ['d', 'new']]);
});

test('failed keys of a new file are said missing from it, and the next run tries them again', async (t) => {
  const project = makeProject({ config: config({ 'en:es': { methodPlugin: 'upper' } }), files: { 'locales/en/a.json': { a: 'One', b: 'Two #fail' } } });
  t.after(project.cleanup);
  const missing = 'failed keys with no previous value are missing from their files (the next run tries them again)';
  const first = await run(project);
  assert.equal(first.status, 1);
  assert.ok(first.stdout.endsWith(`\n1 problem: ${missing}\n`), first.stdout);
  assert.deepEqual(project.json('locales/es/a.json'), { a: 'spa: ONE' });
  const second = await run(project);
  assert.ok(second.stdout.endsWith(`\n1 problem: ${missing}\n`), second.stdout);
  assert.deepEqual(project.calls().map((call) => call.sources), [['One', 'Two #fail'], ['Two #fail']]);
  project.write('locales/en/a.json', { a: 'One #fail', b: 'Two #fail' });
  const third = await run(project);
  assert.ok(third.stdout.endsWith(`\n2 problems: failed keys kept their previous values, and ${missing}\n`), third.stdout);
});

test('the strings of a file with ICU messages are read as ICU even with simple arguments only', async (t) => {
  // Before: beside a plural, "It''s {name}" was sent "It''s ⟦0⟧", and the French "Ouvrir l'⟦0⟧" was written
  // "Ouvrir l'{file}", which ICU shows "Ouvrir l{file}". A file without ICU messages is sent and written as before.
  const strings = { its: "It''s {name}", open: 'Open {file}' };
  const project = makeProject({
    config: config({ 'en:fr': { methodPlugin: 'french' } }), plugins: ['french'],
    files: { 'locales/en/app.json': { files: '{n, plural, one {# file} other {# files}}', ...strings }, 'locales/en/legacy.json': strings },
  });
  t.after(project.cleanup);
  const result = await run(project);
  assert.equal(result.status, 0, result.stderr);
  assert.deepEqual(project.calls()[0].sources, ['⟦0⟧⟦1⟧ file⟦2⟧⟦3⟧ files⟦4⟧', "It's ⟦0⟧", 'Open ⟦0⟧', "It''s ⟦0⟧", 'Open ⟦0⟧']);
  assert.deepEqual(project.json('locales/fr/app.json'),
    { files: '{n, plural, one {# fichier} other {# fichiers}}', its: "C''est {name}", open: "Ouvrir l''{file}" });
  assert.deepEqual(project.json('locales/fr/legacy.json'), { its: "C''est {name}", open: "Ouvrir l'{file}" });
});

test('a file gaining its first plural sends its strings read as ICU again, and losing it too', async (t) => {
  // Before, "Ouvrir l'{file}", translated while the file had no plural, stayed once it had one (ICU shows it
  // "Ouvrir l{file}"): the lock knew the source text, not how it was read. A value written by hand is kept.
  const strings = { its: "It''s {name}", open: 'Open {file}', bye: 'Bye {name}' };
  const plural = { files: '{n, plural, one {# file} other {# files}}' };
  const project = makeProject({
    config: config({ 'en:fr': { methodPlugin: 'french' } }), plugins: ['french'],
    files: { 'locales/en/app.json': strings, 'locales/fr/app.json': { bye: 'Au revoir {name}' } },
  });
  t.after(project.cleanup);
  const head = 'fr (en:fr) via champollion-french (eng>fra)\n  fr/app.json  ';
  const runOn = async (source, ...argv) => {
    if (source) project.write('locales/en/app.json', source);
    const result = await run(project, ...argv);
    assert.equal(result.status, 0, result.stderr);
    return result.stdout;
  };
  assert.equal(await runOn(null), `${head}2 translated, 1 adopted\n  sent 2 strings in 1 call\n`);
  assert.equal(project.json('locales/fr/app.json').open, "Ouvrir l'{file}");
  assert.equal(await runOn({ ...plural, ...strings }, '--dry-run'), `${head}3 to translate, 1 up to date\n`
    + '    + files (new)\n    ~ its (now read as ICU)\n    ~ open (now read as ICU)\n'
    + '  would send 3 strings in 1 call\ndry run: nothing was sent or written\n');
  assert.deepEqual(JSON.parse(await runOn(null, '--dry-run', '--json')).locales[0].files[0].due, [
    { key: 'files', reason: 'new' }, { key: 'its', reason: 'now read as ICU' }, { key: 'open', reason: 'now read as ICU' }]);
  assert.equal(await runOn(null), `${head}3 translated, 1 up to date\n  sent 3 strings in 1 call\n`);
  assert.deepEqual(project.calls().at(-1).sources, ['⟦0⟧⟦1⟧ file⟦2⟧⟦3⟧ files⟦4⟧', "It's ⟦0⟧", 'Open ⟦0⟧']);
  assert.deepEqual(project.json('locales/fr/app.json'), {
    files: '{n, plural, one {# fichier} other {# fichiers}}', its: "C''est {name}", open: "Ouvrir l''{file}",
    bye: 'Au revoir {name}',
  });
  assert.equal(await runOn(null), `${head}4 up to date\n  sent 0 strings in 0 calls\n`);
  assert.equal(await runOn(strings, '--dry-run'), `${head}2 to translate, 1 up to date, 1 to remove\n`
    + '    ~ its (no longer read as ICU)\n    ~ open (no longer read as ICU)\n    - files\n'
    + '  would send 2 strings in 1 call\ndry run: nothing was sent or written\n');
  assert.equal(await runOn(null), `${head}2 translated, 1 up to date, 1 removed\n  sent 2 strings in 1 call\n`);
  assert.deepEqual(project.json('locales/fr/app.json'),
    { its: "C''est {name}", open: "Ouvrir l'{file}", bye: 'Au revoir {name}' });
});

test('--dry-run shows what would change and writes nothing', async (t) => {
  const project = makeProject({ config: config({ 'en:es': { methodPlugin: 'upper' }, 'en:fr': { methodPlugin: 'reverse' } }), files: { 'locales/en/a.json': { a: 'One', b: 'Two' } } });
  t.after(project.cleanup);
  project.write('locales/es/a.json', { a: 'Uno (by hand)', gone: 'x' });
  const result = await run(project, '--dry-run');
  assert.equal(result.status, 0);
  assert.equal(result.stdout, [
    'es (en:es) via champollion-upper (eng>spa)',
    '  es/a.json  1 to translate, 1 adopted, 1 to remove',
    '    + b (new)',
    '    - gone',
    '  would send 1 string in 1 call',
    'fr (en:fr) via reverse (eng>fra)',
    '  fr/a.json  2 to translate',
    '    + a (new)',
    '    + b (new)',
    '  would send 2 strings in 1 call',
    'dry run: nothing was sent or written',
    ''].join('\n'));
  assert.equal(existsSync(join(project.root, 'locales', 'fr')), false);
  assert.equal(existsSync(join(project.root, 'locales', '.champollion-lock.json')), false);
  assert.equal(project.calls().length, 0);
  // The real run keeps the hand-written value, and --force replaces it.
  await run(project, '--locale', 'es');
  assert.deepEqual(project.json('locales/es/a.json'), { a: 'Uno (by hand)', b: 'spa: TWO' });
  assert.equal(existsSync(join(project.root, 'locales', 'fr')), false, '--locale es leaves fr alone');
  await run(project, '--locale', 'es', '--force');
  assert.deepEqual(project.json('locales/es/a.json'), { a: 'spa: ONE', b: 'spa: TWO' });
});

test('changing the pair\'s model sends every key again; a source key removed leaves the target', async (t) => {
  const project = makeProject({ config: config({ 'en:es': { methodPlugin: 'upper' } }), files: { 'locales/en.json': { a: 'One', b: 'Two' } } });
  t.after(project.cleanup);
  await run(project);
  assert.deepEqual(project.json('locales/es.json'), { a: 'spa: ONE', b: 'spa: TWO' });
  project.write('champollion.config.json', config({ 'en:es': { methodPlugin: 'upper', model: 'other' } }));
  project.write('locales/en.json', { a: 'One' });
  const report = JSON.parse((await run(project, '--json')).stdout);
  assert.deepEqual(report.locales[0].files[0].due, [{ key: 'a', reason: 'method changed' }]);
  assert.deepEqual(report.locales[0].files[0].removed, ['b']);
  assert.deepEqual(project.json('locales/es.json'), { a: 'spa: ONE' });
  assert.deepEqual(Object.keys(project.json('locales/.champollion-lock.json').files['es.json']), ['a']);
});

test('a misspelled methodPlugin fails before anything runs and lists the plugins', async (t) => {
  const project = makeProject({ config: config({ 'en:es': { methodPlugin: 'uper' } }), files: { 'locales/en.json': { a: 'One' } } });
  t.after(project.cleanup);
  const result = await run(project);
  assert.equal(result.status, 1);
  assert.match(result.stderr, /^mt-eval-locales: pair "en:es": methodPlugin "uper" names no plugin in .*Available plugins:\n {2}- "Reverse \(bridge reference method\)" \(method_id reverse\) in \.champollion\/methods\/reverse\n/);
  assert.match(result.stderr, /method_id champollion-upper/);
  assert.equal(existsSync(join(project.root, 'locales', 'es.json')), false);
});

test('the bin script runs, and rejects unknown options', () => {
  const bin = join(nodePackage, 'bin', 'mt-eval-locales.js');
  const help = spawnSync(process.execPath, [bin, '--help'], { encoding: 'utf8' });
  assert.equal(help.status, 0);
  assert.match(help.stdout, /^usage: mt-eval-locales/);
  // (as mt-eval locales --help lists them; each is provoked by the tests of this command)
  const statuses = help.stdout.slice(help.stdout.indexOf('exit status: ')).replace(/\s+/g, ' ');
  for (const status of ['0 every key translated', '1 a key failed', '2 usage', '130 interrupted', '143 stopped by SIGTERM', '129 by SIGHUP']) {
    assert.ok(statuses.includes(status), `--help's exit-status paragraph lacks "${status}"`);
  }
  const bad = spawnSync(process.execPath, [bin, '--nope'], { encoding: 'utf8' });
  assert.equal(bad.status, 2);
  assert.match(bad.stderr, /unrecognized arguments: --nope/);
});

test('options are read as mt-eval locales reads them: only whole names, and a slip or an abbreviation gets "did you mean"', () => {
  // (--conf had been read as --config: a later option beginning the same would have changed what it meant)
  assert.deepEqual(parseArguments(['--config=y', '--locale=fr', '--quiet']), {
    config: 'y', locales: ['fr'], dryRun: false, force: false, json: false, quiet: true, help: false, wait: null,
    startTimeoutS: 30 });
  for (const word of ['--conf', '--dry', '--loc=fr']) assert.throws(() => parseArguments([word, 'x']), /unrecognized arguments/);
  const bin = join(nodePackage, 'bin', 'mt-eval-locales.js');
  for (const typed of ['--confg', '--conf']) {
    const slip = spawnSync(process.execPath, [bin, typed, 'x'], { encoding: 'utf8' });
    assert.equal(slip.status, 2);
    assert.equal(slip.stdout, '');
    assert.match(slip.stderr, /^usage: mt-eval-locales \[--config PATH\][^\n]*\n[^\n]*\n/);
    assert.match(slip.stderr, new RegExp(`mt-eval-locales: error: unrecognized arguments: ${typed}`));
    assert.ok(slip.stderr.endsWith(`\n  ${typed}: did you mean --config?\n  \`mt-eval-locales --help\` lists its options\n`),
      slip.stderr);
    assert.doesNotMatch(slip.stderr, /options:/); // (not the whole help)
  }
});

test('--config "" is a usage error, as in mt-eval locales (it read the current directory\'s config)', (t) => {
  const project = makeProject({ config: config({ 'en:es': { methodPlugin: 'upper' } }), plugins: ['upper'],
    files: { 'locales/en.json': '{"hello": "Hello"}\n' } });
  t.after(() => project.cleanup());
  const bin = join(nodePackage, 'bin', 'mt-eval-locales.js');
  for (const argv of [['--config', ''], ['--config=']]) {
    const run = spawnSync(process.execPath, [bin, ...argv, '--quiet'], { encoding: 'utf8', cwd: project.root });
    assert.equal(run.status, 2, run.stderr);
    assert.match(run.stderr, /argument --config: must name a path, got '' \(a variable meant to hold it that is unset or empty\?\): give the path, or leave the option out/);
    assert.equal(run.stdout, '');
  }
  assert.equal(existsSync(join(project.root, 'locales', 'es.json')), false);
});

test('a Python plugin without mt-eval to serve it: said once, with how to point Node at it', (t) => {
  const project = makeProject({ config: config({ 'en:fr': { methodPlugin: 'rot13' } }), plugins: ['rot13'],
    files: { 'locales/en.json': '{"hello": "Hello"}\n' } });
  t.after(() => project.cleanup());
  const bin = join(nodePackage, 'bin', 'mt-eval-locales.js');
  const env = { ...process.env, PATH: '/nonexistent-bin' };
  delete env.MT_EVAL;
  const missing = spawnSync(process.execPath, [bin, '--config', project.root, '--quiet'], { encoding: 'utf8', env });
  assert.equal(missing.status, 1);
  const lines = missing.stderr.trim().split('\n');
  assert.equal(lines.length, 1, missing.stderr);
  assert.match(lines[0], /^mt-eval-locales: pair en:fr: champollion-rot13 \(.*\) cannot start: the mt-eval command is not on PATH \(ENOENT\): the Python method plugin champollion-rot13 runs through `mt-eval serve`/);
  assert.match(lines[0], /point Node at it with the environment variable MT_EVAL \(MT_EVAL=\/path\/to\/mt-eval\/\.venv\/bin\/mt-eval npx mt-eval-locales\)/);
  const wrong = spawnSync(process.execPath, [bin, '--config', project.root, '--quiet'],
    { encoding: 'utf8', env: { ...env, MT_EVAL: '/nonexistent/mt-eval' } });
  assert.equal(wrong.status, 1);
  assert.equal(wrong.stderr.trim().split('\n').length, 1, wrong.stderr);
  assert.match(wrong.stderr, /MT_EVAL is "\/nonexistent\/mt-eval", which cannot be run \(ENOENT\)/);
  assert.equal(existsSync(join(project.root, 'locales', 'fr.json')), false);
});
