// A guest's stderr, attached to what its failure says, keeps Node's warning and drops the hint that follows it
// ("(Use `node --trace-warnings ...` to show where the warning was created)": a command line nobody running the
// method types); cut to its last characters, it begins after a character the cut went through, not with half of it.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { startGuest } from '../index.js';
import { StderrTail } from '../lib/child.js';
import { compactTail, formatTail } from '../lib/host-failures.js';
import { CONFIG, nodeGuestCommand } from './helpers/guests.js';

const HINT = '(Use `node --trace-warnings';
const WARNING = 'Warning: To load an ES module, set "type": "module" in the package.json or use the .mjs extension.';

test('a guest that cannot start: its stderr keeps Node\'s warning, not the hint after it', async (t) => {
  const plugin = mkdtempSync(join(tmpdir(), 'warning-hint-'));
  t.after(() => rmSync(plugin, { recursive: true, force: true }));
  writeFileSync(join(plugin, 'method.json'), JSON.stringify({ name: 'cjs', method_id: 'cjs', node_entry: 'translate.js', dependencies: [] }));
  writeFileSync(join(plugin, 'package.json'), '{"type": "commonjs"}');
  writeFileSync(join(plugin, 'translate.js'), 'export async function translate(entries) { return []; }\n');
  await assert.rejects(startGuest([...nodeGuestCommand.slice(0, -1), plugin], { config: CONFIG, logger: {} }), (error) => {
    assert.match(error.message, /\n {2}guest stderr \(last lines\):\n {4}\(node:\d+\) Warning: To load an ES module/);
    assert.ok(!error.message.includes(HINT), error.message);
    return true;
  });
});

test('an entry\'s one-line stderr tail keeps Node\'s warning, not the hint after it', () => {
  const tail = `(node:7) ${WARNING}\n(Use \`node --trace-warnings ...\` to show where the warning was created)\n`;
  assert.equal(compactTail(tail), ` | stderr: (node:7) ${WARNING}`);
});

test('an entry\'s stderr tail leaves out the guest\'s report of an earlier call it answered failed', () => {
  // before: a crash after a call that threw was explained by that call's stack frames in the guest kit
  const tail = ['mt-eval-guest: translate failed: Error: asked to raise',
    'mt-eval-guest:     at Object.translate (translate.js:13:44)', 'mt-eval-guest:     at GuestServer.run (guest.js:352:42)',
    'mt-eval-guest: methodCard() failed: Error: no card', 'exiting on purpose', 'mt-eval-guest: decide failed: thrown: 3', ''].join('\n');
  assert.equal(compactTail(tail), ' | stderr: mt-eval-guest: methodCard() failed: Error: no card / exiting on purpose');
});

test('an entry\'s stderr tail leaves out the whole report of a failed call whose message has several lines', () => {
  // before: its second line and the frames under it were quoted as if the crash had said them
  const tail = ['mt-eval-guest: translate failed: Error: the service answered 503', 'mt-eval-guest: retry later',
    'mt-eval-guest:     at Object.translate (translate.js:13:44)', 'mt-eval-guest: methodCard() failed: Error: no card',
    'mt-eval-guest: decide failed: thrown: 3', 'mt-eval-guest: still the thrown text', 'exiting on purpose', ''].join('\n');
  assert.equal(compactTail(tail), ' | stderr: mt-eval-guest: methodCard() failed: Error: no card / '
    + 'mt-eval-guest: still the thrown text / exiting on purpose');
});

test('a stderr tail cut inside a character begins after it, not with a lone surrogate', () => {
  const emoji = '\u{1f600}'; // (two UTF-16 units)
  const compact = compactTail(`${emoji.repeat(600)}x`); // (its last 1,000 units begin with an emoji's second half)
  assert.ok(compact.isWellFormed(), JSON.stringify(compact.slice(0, 16)));
  assert.equal(compact, ` | stderr: ...${emoji.repeat(499)}x`);
  const indented = formatTail(`${emoji.repeat(2500)}x`);
  assert.ok(indented.isWellFormed(), JSON.stringify(indented.slice(0, 50)));
  const tail = new StderrTail({ maxChars: 8, maxLineChars: 5 });
  tail.push(`${emoji.repeat(5)}`); // (a line that never ends, kept in pieces of 5 units at most)
  tail.push('x');
  assert.ok(tail.lines.every((line) => line.isWellFormed()), JSON.stringify(tail.lines));
  assert.ok(tail.text().isWellFormed(), JSON.stringify(tail.text()));
});
