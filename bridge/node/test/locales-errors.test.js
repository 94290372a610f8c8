// mt-eval-locales refuses as Python's `mt-eval locales` does: --wait values, a project still in use once
// --wait has run out, and (with --json) every error as a JSON report on stdout.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';

import { acquireProjectLock } from '../index.js';
import { main } from '../lib/champollion/cli.js';
import { captureStream, makeProject } from './helpers/champollion.js';

const config = (pairs) => ({ version: 3, inputLocale: 'en', localesDir: 'locales', pairs });

async function run(project, ...argv) {
  const stdout = captureStream();
  const stderr = captureStream();
  const status = await main(['--config', project.root, '--quiet', ...argv], { stdout, stderr, env: process.env });
  const neutral = (text) => text.replaceAll(project.root, '<project>');
  return { status, stdout: neutral(stdout.text()), stderr: neutral(stderr.text()) };
}

const reverseProject = (files = { 'locales/en.json': { a: 'A' } }) => makeProject({
  config: config({ 'en:es': { methodPlugin: 'reverse' } }), plugins: ['reverse'], files,
});

test('--wait takes only finite seconds, 0 or more, and says so naming --wait', async (t) => {
  const project = reverseProject();
  t.after(project.cleanup);
  for (const value of ['-1', 'nan', 'inf', 'abc', '1e3', '', '-.5']) {
    const result = await run(project, '--wait', value);
    assert.equal(result.status, 2, value);
    assert.equal(result.stderr.split('\n')[0], `mt-eval-locales: --wait ${value}: give a number of seconds, 0 or more (e.g. `
      + '--wait 300), or --wait alone to wait as long as it takes');
  }
  for (const value of ['0', '0.2', '.5', '3.']) assert.equal((await run(project, '--wait', value)).status, 0, value);
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
