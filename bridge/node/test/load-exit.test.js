// A translate.js that calls process.exit() while it is being loaded fails its load with the place in its own code
// (file:line) and the fix, in mt-eval-guest as in loadMethodPlugin; in-process, it does not end the loading program.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';

import { GuestStartError, startGuest } from '../index.js';
import { CONFIG, guestBin, nodePackage, reverseFixture } from './helpers/guests.js';

const EXITS_AT_LOAD = `// a method that gives up at load time
if (!process.env.NO_SUCH_SETTING_FOR_THIS_TEST) process.exit(0);
export async function translate(entries) {
  return entries.map((entry) => ({ id: entry.id, predicted: entry.source }));
}
`;

const made = [];
after(() => made.forEach((directory) => rmSync(directory, { recursive: true, force: true })));

function pluginExitingAtLoad() {
  const directory = mkdtempSync(join(tmpdir(), 'mt-eval-load-exit-'));
  made.push(directory);
  const manifest = JSON.parse(readFileSync(join(reverseFixture, 'method.json'), 'utf8'));
  writeFileSync(join(directory, 'method.json'), JSON.stringify({ ...manifest, method_id: 'exits-at-load', node_entry: 'translate.js' }));
  writeFileSync(join(directory, 'translate.js'), EXITS_AT_LOAD);
  return directory;
}

test('loadMethodPlugin: process.exit() at load fails the load with translate.js:line, and the program goes on', () => {
  const directory = pluginExitingAtLoad();
  const program = `
    import { loadMethodPlugin } from ${JSON.stringify(join(nodePackage, 'index.js'))};
    const method = await loadMethodPlugin(process.argv[1], { config: ${JSON.stringify(CONFIG)} });
    try {
      await method.translate([{ id: 'a', source: 'hello' }]);
      console.log('translated');
    } catch (error) {
      console.log(error.name + ' ' + error.message);
    }
    await method.close();
    console.log('the program went on');
  `;
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', program, directory],
    { encoding: 'utf8', timeout: 20_000, env: { ...process.env, XDG_CACHE_HOME: directory } });
  assert.match(child.stdout, /^MethodLoadError translate\.js:2: MethodExitError: the method called process\.exit\(0\)/m,
    child.stdout + child.stderr);
  assert.match(child.stdout, /fix: remove the process\.exit\(\) that translate\.js calls while it is being loaded/);
  assert.match(child.stdout, /the program went on/);
  assert.equal(child.status, 0, child.stderr);
});

test('mt-eval-guest: process.exit() at load is refused at initialize naming translate.js:line, not the kit', async () => {
  const directory = pluginExitingAtLoad();
  await assert.rejects(
    startGuest([process.execPath, guestBin, directory], {
      config: CONFIG, closeStepMs: 500, env: { ...process.env, XDG_CACHE_HOME: directory }, logger: {},
    }),
    (error) => {
      assert.ok(error instanceof GuestStartError, String(error));
      assert.match(error.message, /cannot load the method: translate\.js:2: MethodExitError/);
      assert.doesNotMatch(error.message, /method-guard/);
      return true;
    },
  );
});
