// mt-eval-guest loading its method (a module or a plugin directory), its launcher and its command line.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { guestBin as bin, guestKit, nodeGuestCommand, nodePackage, reverseFixture } from './helpers/guests.js';

const { scratch, moduleFile, guest, started } = guestKit();

describe('loading the method', () => {
  test('--module takes its id from the file name and its name from the export', async () => {
    const file = moduleFile('My_Fancy Method.mjs', `export const name = 'Fancy';
      export async function translate(entries) { return []; }
      export function methodCard() { return { paradigm: 'rule-based' }; }
      export async function close() { process.stderr.write('close() was called\\n'); }`);
    const driver = guest(['--module', file]);
    const init = (await driver.initialize()).result;
    assert.deepEqual(init.method, { name: 'Fancy', method_id: 'my-fancy-method' });
    assert.deepEqual(init.card, { paradigm: 'rule-based' });
    assert.deepEqual(init.guest.runtime, `node ${process.version}`);
    assert.deepEqual(await driver.close(), { code: 0, signal: null });
    assert.match(driver.stderr, /close\(\) was called/);
  });

  test('where Node keeps a compile cache the guest turns it on; a cache that fails costs nothing', async () => {
    const file = moduleFile('cached.js', 'export async function translate(entries) { return []; }\n');
    const withModule = (enable) => `data:text/javascript,${encodeURIComponent(`const builtin = process.getBuiltinModule;
      process.getBuiltinModule = (name) => (name === 'node:module' ? { enableCompileCache: ${enable} } : builtin(name));`)}`;
    for (const [enable, said] of [["() => process.stderr.write('compile cache on\\n')", /compile cache on/],
      ["() => { throw new Error('no cache here'); }", /^(?![\s\S]*no cache here)/]]) {
      const driver = started([process.execPath, '--import', withModule(enable), bin, '--module', file]);
      assert.equal((await driver.initialize()).result.method.name, 'cached');
      assert.deepEqual(await driver.close(), { code: 0, signal: null });
      assert.match(driver.stderr, said);
    }
  });

  test('the launcher starts the guest whether or not require() loads ES modules, and says nothing of how', async () => {
    const file = moduleFile('launched.js', 'export async function translate(entries) { return []; }\n');
    const quiet = /^(?![\s\S]*(ExperimentalWarning|ES Module))/;
    const flags = process.features.require_module ? [[], ['--no-experimental-require-module']] : [[]];
    for (const flag of flags) {
      const driver = started([process.execPath, ...flag, bin, '--module', file]);
      assert.equal((await driver.initialize()).result.method.name, 'launched');
      assert.deepEqual(await driver.close(), { code: 0, signal: null });
      assert.match(driver.stderr, quiet);
    }
    const help = spawnSync(process.execPath, [bin, '--help'], { encoding: 'utf8' });
    assert.equal(help.status, 0);
    assert.match(help.stdout, /^usage: mt-eval-guest DIR/);
    const wrong = spawnSync(process.execPath, [bin, '--module'], { encoding: 'utf8' });
    assert.equal(wrong.status, 2);
    assert.match(wrong.stderr, /^mt-eval-guest: --module needs a value\nusage:/);
  });

  test("an error a method throws from a timer, or leaves rejected, is logged and the guest serves on", async () => {
    const driver = guest(['--module', moduleFile('stray.js', `
export async function translate(entries) {
  setTimeout(() => { throw new Error('thrown in a timer'); }, 5);
  Promise.reject(new Error('left rejected'));
  return entries.map((e) => ({ id: e.id, predicted: e.source }));
}
`)]);
    await driver.initialize();
    driver.translate(2, [{ id: 'a', source: 'one' }]);
    assert.equal((await driver.next()).result.results[0].predicted, 'one');
    await new Promise((resolve) => setTimeout(resolve, 100)); // the timer has thrown
    driver.translate(3, [{ id: 'b', source: 'two' }]);
    assert.equal((await driver.next()).result.results[0].predicted, 'two');
    assert.deepEqual(await driver.close(), { code: 0, signal: null });
    assert.match(driver.stderr, /^uncaught exception in the method: Error: thrown in a timer\n\s{4}at /m);
    assert.match(driver.stderr, /^unhandled rejection in the method: Error: left rejected/m);
  });

  test('a module without translate fails initialize with -32603, then exits 1', async () => {
    const driver = guest(['--module', moduleFile('empty.js', 'export const name = "nothing";\n')]);
    const init = await driver.initialize();
    assert.equal(init.error.code, -32603);
    assert.match(init.error.message, /does not export translate/);
    driver.translate(2, [{ id: 'a', source: 'x' }]);
    assert.equal((await driver.next()).error.code, -32006);
    assert.deepEqual(await driver.close(), { code: 1, signal: null });
  });

  test('a plugin that only decides, its method.json silent on implements, is told it may say so there', async () => {
    const directory = join(scratch, 'decides-only');
    mkdirSync(directory, { recursive: true });
    writeFileSync(join(directory, 'method.json'), JSON.stringify({ name: 'Judge', node_entry: 'translate.js', dependencies: [] }));
    writeFileSync(join(directory, 'translate.js'), 'export async function decide(rows) { return []; }\n');
    const driver = guest([directory]);
    const init = await driver.initialize();
    assert.match(init.error.message, /translate\.js does not export translate \(it exports decide\)/);
    assert.match(init.error.message, /, or, if it only decides, set "implements": \["decide"\] in method\.json$/);
    await driver.close();
  });

  test('a module whose translate is not a function says what it is, not that it is missing', async () => {
    for (const [code, said] of [['export const translate = "hello";\n', /exports translate, but it is not a function: it is "hello"/],
      ['export const translate = { run() {} };\n', /exports translate, but it is not a function: it is an object/],
      ['module.exports = { translate: 42 };\n', /exports translate, but it is not a function: it is 42/]]) {
      const driver = guest(['--module', moduleFile(code.startsWith('module') ? 'not-a-function.cjs' : 'not-a-function.mjs', code)]);
      const init = await driver.initialize();
      assert.equal(init.error.code, -32603);
      assert.match(init.error.message, said);
      assert.doesNotMatch(init.error.message, /does not export/);
      await driver.close();
    }
  });

  test('a failing methodCard() fails initialize with the file, what it threw and the fix (as Python\'s method_card())', async () => {
    const file = moduleFile('cardless.js', `export async function translate() { return []; }
      export function methodCard() { throw new RangeError('no card today'); }`);
    const driver = guest(['--module', file]);
    const { error } = await driver.initialize();
    assert.deepEqual(error, { code: -32603, message: `cannot load the method: ${file} methodCard(): raised RangeError: no card `
      + 'today (cardless.js:2)\n  fix: make methodCard() return an object of card fields', data: { type: 'MethodCardError' } });
    assert.equal((await driver.close()).code, 1);
  });

  test('a methodCard() asked again that returns no card, or throws, fails that request in initialize\'s words', async () => {
    // (the Python guest answers alike: tests/test_guest_parity.py)
    const file = moduleFile('fickle.js', `export async function translate() { return []; }
      let calls = 0;
      export function methodCard() { calls += 1; if (calls === 3) throw new Error('gone'); return calls === 1 ? {} : [1]; }`);
    const driver = guest(['--module', file]);
    assert.deepEqual((await driver.initialize()).result.card, {});
    const asked = [];
    for (const id of [2, 3]) {
      driver.send({ jsonrpc: '2.0', id, method: 'method_card', params: {} });
      asked.push((await driver.next()).error);
    }
    assert.deepEqual(asked, [
      { code: -32007, message: `${file} methodCard(): a method card must be an object, got list\n  fix: return or write a JSON object`,
        data: { type: 'MethodCardError' } },
      { code: -32007, message: `${file} methodCard(): raised Error: gone (fickle.js:3)\n  fix: make methodCard() return an object `
        + 'of card fields', data: { type: 'MethodCardError' } }]);
    assert.equal((await driver.close()).code, 0);
  });

  test('a plugin directory uses its manifest\'s id and node_entry', async () => {
    const directory = join(scratch, 'Plugin Dir');
    mkdirSync(directory);
    writeFileSync(join(directory, 'method.json'), JSON.stringify({ name: 'Plugin', node_entry: 'main.js' }));
    writeFileSync(join(directory, 'main.js'), 'export default { translate: async (entries) => entries.map((e) => ({ id: e.id, predicted: "ok" })) };\n');
    const driver = guest([directory]);
    assert.deepEqual((await driver.initialize()).result.method, { name: 'Plugin', method_id: 'plugin-dir' });
    driver.translate(1, [{ id: 'a', source: 'x' }]);
    assert.equal((await driver.next()).result.results[0].predicted, 'ok');
    await driver.close();
  });

  test('a host that checked the plugin names the module, its name, id and requests; the files are not read', async () => {
    const directory = join(scratch, 'named');
    mkdirSync(directory);
    writeFileSync(join(directory, 'method.json'), '{ this is not read }');
    const main = join(directory, 'main.js');
    writeFileSync(main, 'export async function translate(entries) { return entries.map((e) => ({ id: e.id, predicted: "ok" })); }\n'
      + 'export async function decide(rows) { return rows.map((r) => ({ id: r.id, answers: {} })); }\n');
    const driver = guest(['--module', main, '--name', 'Named Method', '--method-id', 'named-method', '--implements', 'translate']);
    const { result } = await driver.initialize();
    assert.deepEqual(result.method, { name: 'Named Method', method_id: 'named-method' });
    assert.deepEqual(result.implements, ['translate']);
    driver.translate(1, [{ id: 'a', source: 'x' }]);
    assert.equal((await driver.next()).result.results[0].predicted, 'ok');
    await driver.close();
    const bare = guest(['--module', main, '--name', 'Named Method']);
    const named = (await bare.initialize()).result;
    assert.deepEqual(named.method, { name: 'Named Method', method_id: 'named-method' });
    assert.deepEqual(named.implements, ['translate', 'decide']);
    await bare.close();
  });

  test('command-line mistakes exit 2 with a message', () => {
    const run = (...args) => spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', input: '' });
    const python = join(scratch, 'python-only');
    mkdirSync(python);
    writeFileSync(join(python, 'method.json'), JSON.stringify({ name: 'Py', entry_point: 'pipeline:Py' }));
    for (const [args, pattern] of [
      [[], /give either a plugin directory or --module FILE.js/],
      [['a', 'b'], /give either a plugin directory/],
      [['--frobnicate'], /unknown option --frobnicate/],
      [['--module'], /--module needs a value/],
      [['--max-line-bytes', 'lots', reverseFixture], /--max-line-bytes must be a positive integer/],
      ...['0x10', '1e3', ' 16', '', '0', '16.0'].map((limit) => [['--max-line-bytes', limit, reverseFixture],
        new RegExp(`--max-line-bytes must be a positive integer of bytes \\(e\\.g\\. 1048576\\), got ${JSON.stringify(limit).replace('.', '\\.')}`)]),
      [[join(scratch, 'missing-dir')], /no such directory/],
      [['--module', join(scratch, 'missing.js')], /missing.js: no such file/],
      [['--module', reverseFixture], /reverse is a directory, not a module: give the method's module file \(its translate\.js\), or serve the plugin directory as one \(`mt-eval-guest DIR`, without --module\)$/m],
      [[python], /no "node_entry": this plugin does not run on Node\n\s+fix: serve it with `mt-eval serve DIR`/],
      [[reverseFixture, '--name', 'X'], /--name goes with --module \(a plugin directory names its method\)/],
      [['--module', join(nodePackage, 'index.js'), '--name', ''], /--name is empty: give a value, or leave --name out/],
      [['--module', join(nodePackage, 'index.js'), '--method-id=  '], /--method-id is empty: give a value/],
      [['--module', join(nodePackage, 'index.js'), '--implements', ''], /--implements is empty: give a value/],
      [['--module', join(nodePackage, 'index.js'), '--implements', 'translate,judge'],
        /--implements: "judge" is not one of translate, decide/],
    ]) {
      const result = run(...args);
      assert.equal(result.status, 2, `${args.join(' ')}: exit ${result.status}`);
      assert.match(result.stderr, pattern);
      assert.equal(result.stdout, '');
    }
    const help = run('--help');
    assert.equal(help.status, 0);
    assert.match(help.stdout, /usage: mt-eval-guest DIR/);
  });

  test('the reverse fixture serves under the documented command', async () => {
    const driver = started(nodeGuestCommand);
    assert.equal((await driver.initialize()).result.method.method_id, 'reverse');
    await driver.close();
  });
});
