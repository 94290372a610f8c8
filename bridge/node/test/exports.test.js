// index.d.ts declares every runtime export of index.js, as a value, and nothing it does not export.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';

import * as api from '../index.js';

test('index.d.ts and index.js export the same values', () => {
  const declarations = readFileSync(new URL('../index.d.ts', import.meta.url), 'utf8');
  const declared = new Set([...declarations.matchAll(/^export (?:declare )?(?:function|class|const) (\w+)/gm)].map((m) => m[1]));
  assert.deepEqual([...declared].sort(), Object.keys(api).sort());
});
