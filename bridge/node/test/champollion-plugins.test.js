// loadMethodPlugin: translate.js in-process, a Python entry through `mt-eval serve`; names resolved
// under .champollion/methods; a misspelled name lists what is there; pair settings become the RunConfig.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import {
  ChampollionConfigError, LanguageError, MethodPluginNotFoundError, findMethodPlugins, loadMethodPlugin,
  readChampollionConfig, resolveMethodPlugin, resolvePair,
} from '../index.js';
import { PLUGINS, makeProject } from './helpers/champollion.js';
import { nodeGuestCommand, pythonGuest } from './helpers/guests.js';

const python = pythonGuest();
const mtEval = python.command?.[0];
const CONFIG = {
  version: 3,
  inputLocale: 'en',
  pairs: {
    'en:es': { methodPlugin: 'upper', model: 'm-1', temperature: 0.3, batchSize: 2 },
    'en->fr': { methodPlugin: 'champollion-rot13' },
    'en→pt-BR': { methodPlugin: 'Reverse (bridge reference method)', targetLanguage: 'por' },
  },
};

test('names resolve by directory, method_id or manifest name; paths relative to the base', (t) => {
  const project = makeProject({ config: CONFIG });
  t.after(project.cleanup);
  const found = findMethodPlugins(project.root);
  assert.deepEqual(found.map((p) => [p.name, p.methodId]), [
    ['Reverse (bridge reference method)', 'reverse'],
    ['Rot13 (champollion test method)', 'champollion-rot13'],
    ['Upper (champollion test method)', 'champollion-upper'],
  ]);
  const upper = `${project.root}/.champollion/methods/upper`;
  for (const name of ['upper', 'champollion-upper', 'Upper (champollion test method)', './.champollion/methods/upper']) {
    assert.equal(resolveMethodPlugin(name, { baseDir: project.root }), upper, name);
  }
});

test('a misspelled name fails and lists every plugin found; nothing else is tried', (t) => {
  const project = makeProject({ config: CONFIG });
  t.after(project.cleanup);
  assert.throws(() => resolveMethodPlugin('uper', { baseDir: project.root }), (error) => {
    assert.ok(error instanceof MethodPluginNotFoundError);
    assert.match(error.message, /methodPlugin "uper" names no plugin in .*\.champollion\/methods\. Available plugins:/);
    for (const id of ['reverse', 'champollion-rot13', 'champollion-upper']) assert.match(error.message, new RegExp(`method_id ${id}`));
    assert.equal(error.available.length, 3);
    return true;
  });
  assert.throws(() => resolveMethodPlugin('./nowhere', { baseDir: project.root }), /no such directory/);
});

test('pair settings become the RunConfig, in the language codes the plugin declares', (t) => {
  const project = makeProject({ config: CONFIG });
  t.after(project.cleanup);
  const config = readChampollionConfig(project.root);
  const es = resolvePair(config, 'en:es');
  assert.deepEqual(es.runConfig, { source_lang: 'eng', target_lang: 'spa', batch_size: 2, model: 'm-1', temperature: 0.3 });
  assert.equal(es.methodId, 'champollion-upper');
  assert.equal(resolvePair(config, 'en:fr').runConfig.target_lang, 'fra');
  assert.equal(resolvePair(config, 'en->pt-BR').runConfig.target_lang, 'por');
  assert.throws(() => resolvePair(config, 'en:de'), /has no pair en:de; its pairs: en:es, en->fr, en→pt-BR/);
});

test('a pair\'s RunConfig can be the plugin\'s default', async (t) => {
  const project = makeProject({ config: CONFIG, plugins: ['upper'] });
  t.after(project.cleanup);
  const pair = resolvePair(readChampollionConfig(project.root), 'en:es');
  const plugin = await loadMethodPlugin(pair.directory, { config: pair.runConfig });
  t.after(() => plugin.close());
  const [result] = await plugin.translate([{ id: '1', source: 'hola' }]);
  assert.equal(result.predicted, 'spa: HOLA');
});

test('a pair\'s timeoutS is its method\'s timeout_s a string, and no part of the fingerprint its translations are locked with', async (t) => {
  const project = makeProject({ config: CONFIG, plugins: ['reverse'] });
  t.after(project.cleanup);
  const withTimeout = (timeoutS) => {
    project.write('champollion.config.json', { version: 3, pairs: { 'en:es': { methodPlugin: 'reverse', ...timeoutS && { timeoutS } } } });
    return resolvePair(readChampollionConfig(project.root), 'en:es');
  };
  const translated = async (pair) => {
    const plugin = await loadMethodPlugin(pair.directory, { config: pair.runConfig });
    t.after(() => plugin.close());
    const [result] = await plugin.translate([{ id: '1', source: '!sleep 600 slow' }]);
    return result.error ?? result.predicted;
  };
  const [short, long, unset] = [withTimeout(0.2), withTimeout(3), withTimeout(null)];
  assert.deepEqual(short.runConfig, { source_lang: 'eng', target_lang: 'spa', batch_size: 16, timeout_s: 0.2 });
  assert.equal(await translated(short), 'timed out after 0.2 s (0.2 s per entry)');
  assert.equal(await translated(long), 'spa:wols 006 peels!');
  assert.equal(unset.runConfig.timeout_s, undefined); // (the RunConfig's default)
  assert.equal(new Set([short, long, unset].map((pair) => pair.fingerprint)).size, 1);
});

test('a plugin whose pairs do not fit the locales is an error naming what was tried', (t) => {
  const project = makeProject({ config: { version: 3, inputLocale: 'en', pairs: { 'en:fr': { methodPlugin: 'upper' } } } });
  t.after(project.cleanup);
  project.write('.champollion/methods/upper/method.json', { ...JSON.parse(project.read('.champollion/methods/upper/method.json')), supported_pairs: ['eng>spa'] });
  const config = readChampollionConfig(project.root);
  assert.throws(() => resolvePair(config, 'en:fr'), (error) => error instanceof LanguageError
    && /supports eng>spa; none fits en:fr \(tried eng>fra, en>fra, eng>fr, en>fr\)/.test(error.message)
    && /"targetLanguage"/.test(error.message));
});

test('config errors carry every problem with its JSON path', (t) => {
  const project = makeProject({ config: '{"version": 3, "inputLocale": "en", "pairs": {"en:es": {"methodPlugin": 1, "batchSize": 0}}}' });
  t.after(project.cleanup);
  assert.throws(() => readChampollionConfig(project.root), (error) => error instanceof ChampollionConfigError
    && error.problems.map((p) => p.path).join(' ') === '$.pairs["en:es"].methodPlugin $.pairs["en:es"].batchSize'
    && /expected a string, got the number 1/.test(error.message));
  project.write('champollion.config.json', '{"version": 3,\n  "pairs": }');
  assert.throws(() => readChampollionConfig(project.root), /invalid JSON at line 2, column 12: Expecting value/);
});

test('translate.js runs in this process', async (t) => {
  const project = makeProject({ config: CONFIG, plugins: ['upper'] });
  t.after(project.cleanup);
  const plugin = await loadMethodPlugin('upper', { baseDir: project.root });
  t.after(() => plugin.close());
  assert.equal(plugin.runtime, 'node');
  const results = await plugin.translate([{ id: 'a', source: 'Hello ⟦0⟧' }, { id: 'b', source: '#fail' }, { id: 'c', source: 'x' }],
    { source_lang: 'eng', target_lang: 'spa', batch_size: 2 });
  assert.deepEqual(results.map((r) => [r.id, r.predicted, r.error]), [
    ['a', 'spa: HELLO ⟦0⟧', null], ['b', null, 'asked to fail'], ['c', 'spa: X', null]]);
  await assert.rejects(plugin.translate([{ id: 'a', source: 'x' }], { source_lang: 'English' }), TypeError);
});

test('a Python plugin runs through mt-eval serve', { skip: python.skip }, async (t) => {
  const project = makeProject({ config: CONFIG, plugins: ['rot13'] });
  t.after(project.cleanup);
  const plugin = await loadMethodPlugin('champollion-rot13', { baseDir: project.root, mtEval });
  t.after(() => plugin.close());
  assert.equal(plugin.runtime, 'python');
  const results = await plugin.translate([{ id: '1', source: 'Hello ⟦0⟧!' }, { id: '2', source: 'Bye' }], { source_lang: 'eng', target_lang: 'fra', batch_size: 1 });
  assert.deepEqual(results.map((r) => r.predicted), ['fra: Uryyb ⟦0⟧!', 'fra: Olr']);
});

test('a plugin declaring only a command runs it as a bridge guest', async (t) => {
  const project = makeProject({ config: CONFIG, plugins: [] });
  t.after(project.cleanup);
  project.write('plugins/cmd/method.json', { name: 'Command', method_id: 'cmd', command: nodeGuestCommand });
  const plugin = await loadMethodPlugin('./plugins/cmd', { baseDir: project.root });
  t.after(() => plugin.close());
  assert.equal(plugin.runtime, 'command');
  const results = await plugin.translate([{ id: '1', source: 'abc' }], { source_lang: 'eng', target_lang: 'spa' });
  assert.equal(results[0].predicted, 'spa:cba');
});

test('a Python plugin with no mt-eval to serve it fails with the reason', async (t) => {
  const plugin = await loadMethodPlugin(PLUGINS.rot13, { mtEval: '/nonexistent/mt-eval' });
  t.after(() => plugin.close());
  await assert.rejects(plugin.translate([{ id: '1', source: 'x' }], { source_lang: 'eng', target_lang: 'fra' }), /nonexistent\/mt-eval/);
});

test('translate() checks its entries in this process as through a guest: the same TypeError for a Node or Python plugin', { skip: pythonGuest().skip }, async (t) => {
  const config = { source_lang: 'eng', target_lang: 'spa' };
  const said = [];
  for (const name of ['upper', 'rot13']) { // translate.js in this process; pipeline.py through `mt-eval serve`
    const plugin = await loadMethodPlugin(PLUGINS[name], { config, mtEval: pythonGuest().command[0] });
    t.after(() => plugin.close());
    const errors = [];
    for (const entries of ['hello', [{ id: 1, source: 'x' }], [{ id: 'a', source: 'x' }, { id: 'a', source: 'y' }], [null], null]) {
      errors.push(await plugin.translate(entries).then(() => 'accepted', (error) => `${error.name}: ${error.message}`));
    }
    said.push(errors);
  }
  assert.deepEqual(said[0], [
    'TypeError: entries must be a list of entries, got the string "hello"',
    'TypeError: entries[0].id must be a non-empty string, got the number 1',
    'TypeError: entries[1].id "a" appears twice in the request',
    'TypeError: entries[0] must be an object, got null',
    'TypeError: entries must be a list of entries, got null',
  ]);
  assert.deepEqual(said[1], said[0]);
});

test('hundreds of calls at once to a translate.js in this process are answered without a listener-leak warning', async (t) => {
  const warnings = [];
  const onWarning = (warning) => warnings.push(`${warning.name}: ${warning.message}`);
  process.on('warning', onWarning);
  t.after(() => process.off('warning', onWarning));
  const plugin = await loadMethodPlugin(PLUGINS.upper, { config: { source_lang: 'eng', target_lang: 'spa' } });
  t.after(() => plugin.close());
  const results = await Promise.all(Array.from({ length: 200 }, (_, i) => plugin.translate([{ id: String(i), source: 'x' }])));
  assert.deepEqual(new Set(results.flat().map((r) => r.predicted)), new Set(['spa: X']));
  await new Promise((resolve) => setImmediate(resolve)); // (a warning is emitted on a later tick)
  assert.deepEqual(warnings, []);
});

test('an option value that does not fit fails the load, naming it, whatever runtime the plugin has', async () => {
  // (a Python plugin whose mt-eval is missing: were the options checked only when its guest starts, the load would pass)
  const rot13 = { mtEval: '/nonexistent/mt-eval' };
  for (const [plugin, options, message] of [
    [PLUGINS.upper, { goldFields: 'secret' }, 'options.goldFields must be a list of entry field names, got "secret"'],
    [PLUGINS.rot13, { ...rot13, goldFields: 'secret' }, 'options.goldFields must be a list of entry field names, got "secret"'],
    [PLUGINS.upper, { tolerance: -1 }, 'options.tolerance must be a positive number, got -1'],
    [PLUGINS.upper, { watchdog: 'no' }, 'options.watchdog must be true or false, got "no"'],
    [PLUGINS.upper, { baseDir: 5 }, 'options.baseDir must be a directory path (a string), got 5'],
    [PLUGINS.rot13, { mtEval: 5 }, 'options.mtEval must be a command: a path, or an argv (a list of strings), got 5'],
    [PLUGINS.rot13, { ...rot13, guest: { requestTimeoutMs: 'x' } }, 'options.guest.requestTimeoutMs must be a positive number, got "x"'],
    [PLUGINS.rot13, { ...rot13, guest: { cwd: '/' } }, "options.guest.cwd cannot be given: loadMethodPlugin sets the guest's cwd from the plugin"],
  ]) {
    await assert.rejects(loadMethodPlugin(plugin, options), (error) => error instanceof TypeError && error.message === message);
  }
});

// A translate.js that holds a resource from its import to its close(), counting its instances and closes in
// globalThis (shared by every instance): as an ES module and as a CommonJS one.
const HOLDING = {
  'translate.js': `const counts = (globalThis.holdingCounts ??= { instances: 0, closes: 0 });
counts.instances += 1;
let open = true;
export async function translate(entries) {
  if (!open) throw new Error('resource already closed');
  return entries.map((e) => ({ id: e.id, predicted: e.source }));
}
export async function close() {
  if (!open) throw new Error('closed twice');
  open = false;
  counts.closes += 1;
}
`,
  'translate.cjs': `const counts = (globalThis.holdingCounts ??= { instances: 0, closes: 0 });
counts.instances += 1;
let open = true;
module.exports = {
  async translate(entries) {
    if (!open) throw new Error('resource already closed');
    return entries.map((e) => ({ id: e.id, predicted: e.source }));
  },
  async close() {
    if (!open) throw new Error('closed twice');
    open = false;
    counts.closes += 1;
  },
};
`,
};

for (const entry of Object.keys(HOLDING)) {
  test(`two loads of one ${entry} share it until the last closes, and a load after that gets it afresh`, async (t) => {
    const directory = mkdtempSync(join(tmpdir(), 'holding-'));
    t.after(() => rmSync(directory, { recursive: true, force: true }));
    writeFileSync(join(directory, entry), HOLDING[entry]);
    writeFileSync(join(directory, 'method.json'), JSON.stringify({ name: 'Holding', node_entry: entry, dependencies: [] }));
    globalThis.holdingCounts = { instances: 0, closes: 0 };
    const config = { config: { source_lang: 'eng', target_lang: 'spa' } };
    const one = [{ id: '1', source: 'hello' }];
    const [a, b] = [await loadMethodPlugin(directory, config), await loadMethodPlugin(directory, config)];
    assert.equal((await a.translate(one))[0].predicted, 'hello');
    assert.equal((await b.translate(one))[0].predicted, 'hello');
    await a.close();
    // before: a's close() closed the module b uses too ("resource already closed"), and b's close() threw
    assert.deepEqual((await b.translate(one)).map((r) => [r.predicted, r.error]), [['hello', null]]);
    assert.deepEqual(globalThis.holdingCounts, { instances: 1, closes: 0 });
    await b.close();
    assert.deepEqual(globalThis.holdingCounts, { instances: 1, closes: 1 });
    const c = await loadMethodPlugin(directory, config); // (as a test suite's beforeEach loads it again)
    t.after(() => c.close());
    assert.deepEqual((await c.translate(one)).map((r) => [r.predicted, r.error]), [['hello', null]]);
    assert.deepEqual(globalThis.holdingCounts, { instances: 2, closes: 1 });
  });
}

test('a default config that does not fit fails the load, in the words translate() would refuse it with', async () => {
  const pair = { source_lang: 'eng', target_lang: 'spa' };
  // (a Python plugin whose mt-eval is missing: were the config checked only when a call needs it, the load would pass)
  const rot13 = { mtEval: '/nonexistent/mt-eval' };
  for (const [plugin, options, message] of [
    [PLUGINS.upper, { config: 'eng-spa' }, 'invalid config: expected an object, got the string "eng-spa"'],
    [PLUGINS.upper, { config: { source_lang: 'eng' } }, 'invalid config: $.target_lang: required field "target_lang" is missing'],
    [PLUGINS.upper, { config: { ...pair, batch_size: 0 } }, 'invalid config: $.batch_size: must be >= 1, got 0'],
    [PLUGINS.rot13, { ...rot13, config: { ...pair, temprature: 0.3 } }, 'invalid config: $.temprature: unknown field "temprature"'],
  ]) {
    await assert.rejects(loadMethodPlugin(plugin, options), (error) => error instanceof TypeError && error.message === message);
  }
  // a plugin that decides too takes a config without the language pair (decide's), which translate() then refuses
  const reverse = await loadMethodPlugin(PLUGINS.reverse, { config: { temperature: 0 } });
  await assert.rejects(reverse.translate([{ id: '1', source: 'a' }]), /^TypeError: invalid config: \$\.source_lang: required field "source_lang" is missing$/);
  await reverse.close();
});

test('methodCard() after close() throws as translate() does, for an in-process plugin as for one through a guest', async (t) => {
  const directory = mkdtempSync(join(tmpdir(), 'carded-'));
  t.after(() => rmSync(directory, { recursive: true, force: true }));
  // (its card says whether close() ran: the card of a closed module is no longer what the method reports)
  writeFileSync(join(directory, 'translate.js'), `let open = true;
export async function translate(entries) { return entries.map((e) => ({ id: e.id, predicted: e.source })); }
export function methodCard() { return { description: open ? 'open' : 'closed' }; }
export async function close() { open = false; }
`);
  writeFileSync(join(directory, 'method.json'), JSON.stringify({ name: 'Carded', node_entry: 'translate.js', dependencies: [] }));
  const config = { source_lang: 'eng', target_lang: 'spa' };
  for (const plugin of [directory, PLUGINS.rot13]) {
    const method = await loadMethodPlugin(plugin, { config, mtEval });
    if (plugin === directory) assert.equal((await method.methodCard()).description, 'open');
    await method.close();
    await assert.rejects(method.translate([{ id: '1', source: 'a' }]), /^Error: the method plugin is closed$/);
    await assert.rejects(method.methodCard(), /^Error: the method plugin is closed$/);
  }
});

test('loadMethodPlugin without a name or path (or with a number) is a TypeError that says what it needs', async () => {
  for (const [given, said] of [[undefined, 'nothing'], [5, '5'], ['', '""'], ['  ', '"  "']]) {
    await assert.rejects(loadMethodPlugin(given), (error) => {
      assert.ok(error instanceof TypeError);
      assert.equal(error.message, `loadMethodPlugin needs a plugin's name or path (a string), got ${said}`);
      return true;
    });
  }
});
