// A translate.js run in mt-eval-locales's own process prints with console.log or writes to process.stdout: that
// goes to stderr, so stdout holds the report alone (with --json, JSON that parses).
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';

import { makeProject } from './helpers/champollion.js';
import { nodePackage } from './helpers/guests.js';

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
