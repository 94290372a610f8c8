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
