// Timeouts far longer than a timer can hold (setTimeout's longest is 2^31 − 1 ms, 24.8 days; a longer one fires at
// once) mean "practically never" in champollion and loadMethodPlugin: they are cut to the longest, not to 1 ms.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { translateLocales } from '../lib/champollion/sync.js';
import { PLUGINS, makeProject } from './helpers/champollion.js';
import { nodePackage } from './helpers/guests.js';

test('a closeTimeoutS past what a timer holds waits for close() rather than giving up at once', async (t) => {
  const project = makeProject({
    config: { version: 3, inputLocale: 'en', pairs: { 'en:es': { methodPlugin: 'upper' } } },
    files: { 'locales/en.json': { a: 'One' } }, plugins: ['upper'],
  });
  t.after(project.cleanup);
  const translate = join('.champollion', 'methods', 'upper', 'translate.js');
  project.write(translate, `${project.read(translate)}
export function close() { return new Promise((resolve) => { setTimeout(resolve, 200); }); }\n`);
  const warnings = [];
  const onWarning = (warning) => warnings.push(warning.name);
  process.on('warning', onWarning);
  t.after(() => process.off('warning', onWarning));
  const problems = [];
  const report = await translateLocales(project.root, { closeTimeoutS: 1e10, onCloseProblem: (problem) => problems.push(problem) });
  assert.deepEqual(report.locales.map((locale) => locale.sent), [1]);
  assert.deepEqual(problems, []); // (before: "champollion-upper's close() did not return within 10000000000 s")
  assert.equal(warnings.includes('TimeoutOverflowWarning'), false);
});

test('an in-process method with a timeout_s past what the watchdog holds is not stopped by a wrapped limit', (t) => {
  const scratch = mkdtempSync(join(tmpdir(), 'champollion-long-'));
  t.after(() => rmSync(scratch, { recursive: true, force: true }));
  const plugin = join(scratch, 'upper');
  cpSync(PLUGINS.upper, plugin, { recursive: true });
  // A call that blocks the event loop for 1.5 s (well within its timeout) and then answers.
  writeFileSync(join(plugin, 'translate.js'), `export async function translate(entries) {
  const until = Date.now() + 1500;
  while (Date.now() < until);
  return entries.map((e) => ({ id: e.id, predicted: e.source }));
}\n`);
  // 4,294,967,796 ms: 500 ms once wrapped into the watchdog's 32-bit limit, which would end the process.
  const script = `import { loadMethodPlugin } from ${JSON.stringify(join(nodePackage, 'index.js'))};
const method = await loadMethodPlugin(${JSON.stringify(plugin)}, { config: { source_lang: 'eng', target_lang: 'spa', timeout_s: 4294967.796, batch_size: 1 } });
const [result] = await method.translate([{ id: 'a', source: 'Hello' }]);
await method.close();
console.log(JSON.stringify(result.predicted ?? result.error));`;
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 30_000 });
  assert.deepEqual([run.status, run.signal, run.stdout], [0, null, '"Hello"\n'], run.stderr);
});
