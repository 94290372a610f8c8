// The mirrored glossary: used from config.params.artifact_path and only when its sha256 matches the pin.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';

import { translate } from '../translate.js';

const SAMPLE = new URL('../glossary.tsv', import.meta.url);
const ENTRIES = [{ id: 'a', source: 'Thank you for the book.' }, { id: 'b', source: 'The cat drinks water.' }];
const scratch = mkdtempSync(join(tmpdir(), 'artifact-test-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

const run = (params) => translate(ENTRIES, { source_lang: 'eng', target_lang: 'spa', params });

test('the sample copy is the pinned artifact', () => {
  const manifest = JSON.parse(readFileSync(new URL('../method.json', import.meta.url), 'utf8').replace(/^\uFEFF/, ''));
  const dependency = manifest.dependencies.find((d) => d.id === 'glossary');
  assert.equal(dependency.access, 'mirrored');
  assert.equal(dependency.pin, `sha256:${createHash('sha256').update(readFileSync(SAMPLE)).digest('hex')}`);
});

test('a mirror copy given by artifact_path is used', async () => {
  const mirror = join(scratch, 'mirror.tsv');
  copyFileSync(SAMPLE, mirror);
  const results = await run({ artifact_path: mirror });
  assert.deepEqual(results.map((r) => r.predicted), ['Gracias por el libro.', 'El gato bebe agua.']);
});

test('an artifact that differs from the pin is refused for every entry', async () => {
  const changed = join(scratch, 'changed.tsv');
  writeFileSync(changed, Buffer.concat([readFileSync(SAMPLE), Buffer.from('cat\tgatito\n')]));
  const results = await run({ artifact_path: changed });
  assert.deepEqual(results.map((r) => r.predicted), [null, null]);
  assert.ok(results.every((r) => r.error.includes('but method.json pins') && r.error.includes(changed)));
});

test('a missing artifact is a per-entry error', async () => {
  const absent = join(scratch, 'absent.tsv');
  const results = await run({ artifact_path: absent });
  assert.deepEqual(results.map((r) => r.error), Array(2).fill(`cannot read the glossary ${absent}: no such file`));
});
