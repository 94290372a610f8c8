// mt-eval-guest whose answers cannot be written, as `mt-eval serve`: a reader gone (`| head`, a host that closed its
// end) ends it quietly with 141; a full disk is said once on stderr, and it stops with 1.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { closeSync, existsSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

import { CONFIG, nodePackage, reverseFixture } from './helpers/guests.js';

const bin = join(nodePackage, 'bin', 'mt-eval-guest.js');
const noFull = existsSync('/dev/full') ? false : 'no /dev/full here';
const initialize = `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize',
  params: { protocol_versions: ['mt-eval-bridge/1'], config: CONFIG } })}\n`;

// The guest given an initialize request and its stdin left open: {status, stderr} once it has exited.
function served({ stdout = 'pipe', closeStdout = false } = {}) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [bin, reverseFixture], { stdio: ['pipe', stdout, 'pipe'] });
    if (closeStdout) child.stdout.destroy(); // (the reader is gone before the answer is written)
    let stderr = '';
    child.stderr.on('data', (chunk) => { stderr += chunk; });
    child.stdin.write(initialize); // (not ended: only the failed write can end the guest)
    const timer = setTimeout(() => child.kill(), 10_000);
    child.on('close', (status) => { clearTimeout(timer); resolve({ status, stderr }); });
  });
}

test('answers whose reader is gone: exit status 141, nothing said', async () => {
  const run = await served({ closeStdout: true });
  assert.equal(run.status, 141, run.stderr);
  assert.doesNotMatch(run.stderr, /cannot write/);
});

test('answers that cannot be written (a full disk): said in one line, exit status 1', { skip: noFull }, async (t) => {
  const full = openSync('/dev/full', 'w');
  t.after(() => closeSync(full));
  const run = await served({ stdout: full });
  assert.equal(run.status, 1, run.stderr);
  assert.match(run.stderr, /^mt-eval-guest: cannot write the answers: .*no space left on device.*; stopping$/im);
});
