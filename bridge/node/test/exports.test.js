// index.d.ts (with the files under lib/types/ it re-exports) declares every runtime export of index.js, as a
// value, and nothing it does not export.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { test } from 'node:test';

import * as api from '../index.js';

const INDEX = new URL('../index.d.ts', import.meta.url);

/** The text of a declaration file and of every file it re-exports with `export * from` (a .js path names its .d.ts). */
function declarationsOf(file) {
  const text = readFileSync(file, 'utf8');
  const reexported = [...text.matchAll(/^export \* from '(\.[^']+)\.js';$/gm)];
  return [text, ...reexported.map((m) => declarationsOf(new URL(`${m[1]}.d.ts`, file)))].join('\n');
}

test('index.d.ts and index.js export the same values', () => {
  const declarations = declarationsOf(INDEX);
  const declared = [...declarations.matchAll(/^export (?:declare )?(?:function|class|const) (\w+)/gm)].map((m) => m[1]);
  assert.equal(new Set(declared).size, declared.length, 'a value declared twice');
  assert.deepEqual([...declared].sort(), Object.keys(api).sort());
});

test('index.d.ts re-exports every declaration file under lib/types/', () => {
  const text = readFileSync(INDEX, 'utf8');
  const reexported = [...text.matchAll(/^export \* from '\.\/lib\/types\/([\w-]+)\.js';$/gm)].map((m) => `${m[1]}.d.ts`);
  const files = readdirSync(new URL('../lib/types/', import.meta.url)).filter((name) => name.endsWith('.d.ts'));
  assert.deepEqual(reexported.sort(), files.sort());
});

/** The members a block of declarations names at its top level (two spaces in), from `start` to its `}` line. */
function membersAfter(declarations, start) {
  const from = declarations.indexOf(start);
  assert.notEqual(from, -1, `no ${start} in the declarations`);
  if (declarations.slice(from, declarations.indexOf('\n', from)).trimEnd().endsWith('{}')) return [];
  const block = declarations.slice(from + start.length, declarations.indexOf('\n}', from));
  return [...block.matchAll(/^ {2}(?:readonly )?(\w+)\??[:(]/gm)].map((m) => m[1]).filter((name) => name !== 'constructor');
}

/** The option names an unknown option's TypeError lists ("...; the options are a, b, c"). */
async function acceptedOptions(call) {
  const error = await Promise.resolve().then(call).then(() => null, (thrown) => thrown);
  assert.ok(error instanceof TypeError, `an unknown option was not refused: ${error}`);
  return error.message.match(/the options are (.+)$/)[1].split(', ');
}

test('the options index.d.ts declares are the options startGuest, translateLocales and loadMethodPlugin accept', async () => {
  const declarations = declarationsOf(INDEX);
  const cases = [
    ['export interface StartGuestOptions {', () => api.startGuest(['node'], { notAnOption: 1 })],
    ['export function translateLocales(configPathOrDir?: string, options?: {', () => api.translateLocales(undefined, { notAnOption: 1 })],
    ['export interface LoadMethodPluginOptions {', () => api.loadMethodPlugin('.', { notAnOption: 1 })],
  ];
  for (const [start, call] of cases) {
    assert.deepEqual(membersAfter(declarations, start).sort(), (await acceptedOptions(call)).sort(), start);
  }
});

test('the fields index.d.ts declares of each error class are the fields its errors have', () => {
  const declarations = declarationsOf(INDEX);
  const made = {
    BridgeError: new api.BridgeError(-32603, 'failed', { detail: 1 }),
    ChampollionConfigError: new api.ChampollionConfigError('champollion.config.json', []),
    GuestStartError: new api.GuestStartError('did not start'),
    LanguageError: new api.LanguageError('no pair'),
    LocalesDirError: new api.LocalesDirError('no directory'),
    ManifestError: new api.ManifestError([], 'cannot load'),
    MethodLoadError: new api.MethodLoadError('cannot load'),
    MethodPluginNotFoundError: new api.MethodPluginNotFoundError('no plugin', []),
    PlaceholderError: new api.PlaceholderError('lost'),
    ProblemsError: new api.ProblemsError([]),
    ProjectBusyError: new api.ProjectBusyError('champollion project locales', {}),
  };
  const classes = Object.keys(api).filter((name) => api[name]?.prototype instanceof Error);
  assert.deepEqual(Object.keys(made).sort(), classes.sort(), 'an error class the test does not make');
  for (const [name, error] of Object.entries(made)) {
    const declared = membersAfter(declarations, `export class ${name} extends `);
    const parent = declarations.match(new RegExp(`export class ${name} extends (\\w+)`))[1];
    const inherited = parent === 'Error' ? [] : membersAfter(declarations, `export class ${parent} extends `);
    const own = Object.keys(error).filter((field) => field !== 'name');
    assert.deepEqual([...new Set([...declared, ...inherited])].sort(), own.sort(), name);
  }
});
