// mt-eval-guest whose answers cannot be written, as `mt-eval serve`: a reader gone (`| head`, a host that closed its
// end) ends it quietly with 141; a full disk is said once on stderr, and it stops with 1.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { CONFIG, nodePackage, reverseFixture } from './helpers/guests.js';

const bin = join(nodePackage, 'bin', 'mt-eval-guest.js');
const noFull = existsSync('/dev/full') ? false : 'no /dev/full here';
const initialize = `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize',
  params: { protocol_versions: ['mt-eval-bridge/1'], config: CONFIG } })}\n`;

// The guest given an initialize request and its stdin left open: {status, stderr} once it has exited.
function served({ stdout = 'pipe', closeStdout = false, method = reverseFixture } = {}) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [bin, method], { stdio: ['pipe', stdout, 'pipe'] });
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

test('a guest stopped by answers it cannot write first writes out what is queued for its stderr', { skip: noFull },
  async (t) => {
    // A method that writes a megabyte to stderr as it loads: more than a pipe holds, so most of it is still queued
    // when the initialize answer fails (before, the guest exited at once, and that and its own line were lost).
    const method = mkdtempSync(join(tmpdir(), 'mt-eval-loud-'));
    t.after(() => rmSync(method, { recursive: true, force: true }));
    writeFileSync(join(method, 'method.json'), JSON.stringify({ name: 'Loud', method_id: 'loud',
      node_entry: 'translate.js', implements: ['translate'], dependency_class: 'S', dependencies: [] }));
    writeFileSync(join(method, 'translate.js'), "process.stderr.write(`${'x'.repeat(1 << 20)}\\n`);\n"
      + 'export const translate = async (entries) => entries.map(({ id, source }) => ({ id, predicted: source }));\n');
    const full = openSync('/dev/full', 'w');
    t.after(() => closeSync(full));
    const run = await served({ stdout: full, method });
    assert.equal(run.status, 1, run.stderr.slice(-300));
    assert.ok(run.stderr.startsWith(`${'x'.repeat(1 << 20)}\n`), `${run.stderr.length} bytes on stderr`);
    assert.match(run.stderr, /\nmt-eval-guest: cannot write the answers: .*no space left on device.*; stopping\n$/i);
  });
