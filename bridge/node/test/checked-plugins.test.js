// mt-eval-guest DIR remembers the plugins whose files passed its checks (lib/checked-plugins.js): started again on the
// same files it skips the checks, and any change to the files is checked again.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, utimesSync, writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';

import { nodePackage } from './helpers/guests.js';
import { recall } from '../lib/checked-plugins.js';

const bin = join(nodePackage, 'bin', 'mt-eval-guest.js');
const scratch = mkdtempSync(join(tmpdir(), 'mt-eval-checked-'));
after(() => rmSync(scratch, { recursive: true, force: true }));
const INITIALIZE = `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize',
  params: { protocol_versions: ['mt-eval-bridge/1'] } })}\n`;
const TRANSLATE = 'export async function translate(entries) { return entries.map((e) => ({ id: e.id, predicted: e.source })); }\n';

let count = 0;
function plugin(manifest = { name: 'Echo', node_entry: 'translate.js', dependencies: [] }) {
  const directory = join(scratch, `plugin-${++count}`);
  mkdirSync(directory);
  writeFileSync(join(directory, 'translate.js'), TRANSLATE);
  writeFileSync(join(directory, 'method.json'), JSON.stringify(manifest));
  return directory;
}

// Start the guest on `directory` with its cache in `cache`: {status, answer (the initialize result), stderr}.
// `guest` is another copy of mt-eval-guest.js; `env` replaces XDG_CACHE_HOME with other variables; `timeout` (ms) ends it.
function start(directory, cache, { guest = bin, env = { XDG_CACHE_HOME: cache }, timeout } = {}) {
  const done = spawnSync(process.execPath, [guest, directory], {
    input: INITIALIZE, encoding: 'utf8', env: { ...process.env, ...env }, timeout,
  });
  const line = done.stdout.split('\n')[0];
  return { status: done.status, answer: line ? JSON.parse(line).result : null, stderr: done.stderr };
}

describe('plugins whose files were checked', () => {
  test('a second start on unchanged files uses what the first one checked', () => {
    const cache = join(scratch, 'cache-1');
    const directory = plugin();
    assert.equal(recall(directory), null);
    const first = start(directory, cache);
    assert.equal(first.answer.method.name, 'Echo');
    assert.equal(readdirSync(join(cache, 'mt-eval', 'checked-plugins')).length, 1);
    const previous = process.env.XDG_CACHE_HOME;
    process.env.XDG_CACHE_HOME = cache;
    try {
      assert.equal(recall(directory).name, 'Echo');
    } finally {
      if (previous === undefined) delete process.env.XDG_CACHE_HOME;
      else process.env.XDG_CACHE_HOME = previous;
    }
    assert.deepEqual(start(directory, cache).answer, first.answer);
    // What was remembered is what the guest uses, not a check of its own: a record naming the method otherwise shows.
    const [name] = readdirSync(join(cache, 'mt-eval', 'checked-plugins'));
    const recordFile = join(cache, 'mt-eval', 'checked-plugins', name);
    const record = JSON.parse(readFileSync(recordFile, 'utf8'));
    writeFileSync(recordFile, JSON.stringify({ ...record, target: { ...record.target, name: 'Remembered' } }));
    assert.equal(start(directory, cache).answer.method.name, 'Remembered');
  });

  test('a changed method.json, a new card or a missing entry file is checked again', () => {
    const cache = join(scratch, 'cache-2');
    const directory = plugin();
    assert.equal(start(directory, cache).status, 0);
    writeFileSync(join(directory, 'method.json'), JSON.stringify({ name: 'Renamed', node_entry: 'translate.js', dependencies: [] }));
    assert.equal(start(directory, cache).answer.method.name, 'Renamed');
    writeFileSync(join(directory, 'method.json'), JSON.stringify({ name: 'Renamed', node_entry: 'translate.js', dependencies: 'none' }));
    const refused = start(directory, cache);
    assert.equal(refused.status, 2);
    assert.match(refused.stderr, /dependencies/);
    writeFileSync(join(directory, 'method.json'), JSON.stringify({ name: 'Renamed', node_entry: 'translate.js', dependencies: [] }));
    assert.equal(start(directory, cache).status, 0);
    writeFileSync(join(directory, 'method_card.json'), '[]');
    const badCard = start(directory, cache);
    assert.equal(badCard.status, 2);
    assert.match(badCard.stderr, /method_card\.json/);
    rmSync(join(directory, 'method_card.json'));
    assert.equal(start(directory, cache).status, 0);
    rmSync(join(directory, 'translate.js'));
    const missing = start(directory, cache);
    assert.equal(missing.status, 2);
    assert.match(missing.stderr, /translate\.js" does not exist/);
  });

  test('a method_card.json that is a dangling link or a FIFO, added after a start, is refused (not taken for no card)', () => {
    const cache = join(scratch, 'cache-not-a-file');
    const directory = plugin();
    assert.equal(start(directory, cache).status, 0);
    symlinkSync('missing.json', join(directory, 'method_card.json'));
    const dangling = start(directory, cache);
    assert.equal(dangling.status, 2);
    assert.match(dangling.stderr, /method_card\.json: a link to missing\.json, which is not a file/);
    rmSync(join(directory, 'method_card.json'));
    assert.equal(spawnSync('mkfifo', [join(directory, 'method_card.json')]).status, 0);
    const fifo = start(directory, cache, { timeout: 10_000 }); // (it waited for a writer to the FIFO, for ever)
    assert.equal(fifo.status, 2);
    assert.match(fifo.stderr, /method_card\.json: not a regular file \(a FIFO, socket or device\)/);
  });

  test('files holding U+FFFD are checked every time: bytes that are not UTF-8 never pass for what was checked', () => {
    const cache = join(scratch, 'cache-replacement');
    const directory = plugin({ name: 'Echo \uFFFD', node_entry: 'translate.js', dependencies: [] });
    assert.equal(start(directory, cache).answer.method.name, 'Echo \uFFFD');
    assert.equal(existsSync(join(cache, 'mt-eval', 'checked-plugins')), false, 'nothing remembered');
    // The same text with a byte that is not UTF-8 where U+FFFD was (they read alike as UTF-8) is refused.
    const manifest = join(directory, 'method.json');
    const bytes = readFileSync(manifest);
    const at = bytes.indexOf(Buffer.from('\uFFFD'));
    writeFileSync(manifest, Buffer.concat([bytes.subarray(0, at), Buffer.from([0xff]), bytes.subarray(at + 3)]));
    const refused = start(directory, cache);
    assert.equal(refused.status, 2);
    assert.match(refused.stderr, /not valid UTF-8/);
  });

  test('an entry file whose link now points elsewhere is checked again', () => {
    const cache = join(scratch, 'cache-3');
    const directory = plugin({ name: 'Linked', node_entry: 'entry.js', dependencies: [] });
    writeFileSync(join(directory, 'other.js'), TRANSLATE);
    symlinkSync('translate.js', join(directory, 'entry.js'));
    assert.equal(start(directory, cache).status, 0);
    rmSync(join(directory, 'entry.js'));
    symlinkSync(join(scratch, 'outside.js'), join(directory, 'entry.js'));
    writeFileSync(join(scratch, 'outside.js'), TRANSLATE);
    const escaped = start(directory, cache);
    assert.equal(escaped.status, 2);
    assert.match(escaped.stderr, /resolves outside the plugin directory/);
  });

  test('a change to the package that checks plugins makes it check them again', () => {
    const cache = join(scratch, 'cache-checker');
    const copy = join(scratch, 'package-copy');
    for (const part of ['bin', 'lib', 'package.json']) cpSync(join(nodePackage, part), join(copy, part), { recursive: true });
    const guest = join(copy, 'bin', 'mt-eval-guest.js');
    const directory = plugin();
    assert.equal(start(directory, cache, { guest }).answer.method.name, 'Echo');
    const records = join(cache, 'mt-eval', 'checked-plugins');
    const [name] = readdirSync(records);
    const record = JSON.parse(readFileSync(join(records, name), 'utf8'));
    writeFileSync(join(records, name), JSON.stringify({ ...record, target: { ...record.target, name: 'Remembered' } }));
    assert.equal(start(directory, cache, { guest }).answer.method.name, 'Remembered');
    for (const file of ['lib/manifest.js', 'lib/contract/plugin.js', 'lib/generated/schemas/method.json']) {
      writeFileSync(join(records, name), JSON.stringify({ ...record, target: { ...record.target, name: 'Remembered' } }));
      const later = new Date(Date.now() + 60_000);
      utimesSync(join(copy, file), later, later);
      assert.equal(start(directory, cache, { guest }).answer.method.name, 'Echo', `${file} changed`);
    }
  });

  test('without XDG_CACHE_HOME, what was checked is remembered under $HOME/.cache', () => {
    const home = join(scratch, 'home');
    mkdirSync(home);
    const directory = plugin();
    const env = { HOME: home, XDG_CACHE_HOME: '' };
    assert.equal(start(directory, null, { env }).answer.method.name, 'Echo');
    assert.equal(readdirSync(join(home, '.cache', 'mt-eval', 'checked-plugins')).length, 1);
    assert.equal(start(directory, null, { env }).status, 0);
  });

  test('a cache that cannot be written costs only the check', { skip: process.getuid?.() === 0 && 'root writes anywhere' }, () => {
    const cache = join(scratch, 'read-only');
    mkdirSync(cache);
    chmodSync(cache, 0o500);
    const directory = plugin();
    assert.equal(start(directory, cache).answer.method.name, 'Echo');
    assert.equal(start(directory, cache).answer.method.name, 'Echo');
  });

  test('a cache path that is a file costs only the check', () => {
    const cache = join(scratch, 'a-file');
    writeFileSync(cache, 'not a directory');
    const directory = plugin();
    assert.equal(start(directory, cache).answer.method.name, 'Echo');
  });

  test('at most 256 plugins are remembered: the least recently checked are forgotten', () => {
    const cache = join(scratch, 'cache-full');
    const records = join(cache, 'mt-eval', 'checked-plugins');
    mkdirSync(records, { recursive: true });
    for (let i = 0; i < 260; i++) {
      writeFileSync(join(records, `old-${i}.json`), '{}');
      utimesSync(join(records, `old-${i}.json`), 1_000_000 + i, 1_000_000 + i);
    }
    const directory = plugin();
    assert.equal(start(directory, cache).status, 0);
    const kept = readdirSync(records);
    assert.equal(kept.length, 256);
    assert.ok(!kept.includes('old-0.json') && kept.includes('old-259.json'));
    assert.equal(kept.filter((name) => !name.startsWith('old-')).length, 1); // the plugin just checked is kept
  });
});
