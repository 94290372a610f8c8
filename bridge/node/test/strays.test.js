// A guest that starts a process outside its own process group (spawn with detached: true) does not leave it running
// when the host closes the guest: a signal to the guest's group does not reach it, so the host ends it by pid (read
// before the guest was stopped), and says so in its log.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { startGuest } from '../index.js';
import { isRunning, nodePackage, recordingLogger, waitFor } from './helpers/guests.js';

const METHOD = `import { spawn } from 'node:child_process';
export async function translate(entries) {
  const helper = spawn('sleep', ['300'], { detached: true, stdio: 'ignore' });
  return entries.map((e) => ({ id: e.id, predicted: String(helper.pid) }));
}
`;

test('a process the guest started outside its process group is ended with it, and named', { skip: process.platform !== 'linux' }, async (t) => {
  const scratch = mkdtempSync(join(tmpdir(), 'strays-'));
  t.after(() => rmSync(scratch, { recursive: true, force: true }));
  writeFileSync(join(scratch, 'translate.mjs'), METHOD);
  const { logger, text } = recordingLogger();
  const guest = await startGuest([process.execPath, join(nodePackage, 'bin', 'mt-eval-guest.js'), '--module',
    join(scratch, 'translate.mjs')], { logger, closeStepMs: 500 });
  const [result] = await guest.translate([{ id: '1', source: 'Hi' }], { source_lang: 'eng', target_lang: 'spa' });
  const helper = Number(result.predicted);
  t.after(() => { try { process.kill(helper, 'SIGKILL'); } catch { /* ended */ } });
  assert.ok(isRunning(helper));
  await guest.close();
  assert.ok(await waitFor(() => !isRunning(helper), 3000), 'the detached helper outlived the guest');
  assert.match(text(), new RegExp(`warn: the guest left 1 process running outside its process group \\(pid ${helper}: sleep 300\\): ended`));
});
